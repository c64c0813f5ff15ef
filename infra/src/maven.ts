// Server jars come from Maven Central through `mvn`, copied once into a cache keyed by the pom's content.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand } from "./process.ts";

function libDirOf(pomFile: string, cacheDir: string, name: string): string {
  const hash = new Bun.CryptoHasher("sha256").update(readFileSync(pomFile)).digest("hex").slice(0, 16);
  return join(cacheDir, `${name}-${hash}`);
}

/** The cached jars' directory, or null when they were never resolved (tests that must not download skip then). */
export function cachedJars(pomFile: string, cacheDir: string, name: string): string | null {
  const libDir = libDirOf(pomFile, cacheDir, name);
  return existsSync(join(libDir, ".complete")) ? libDir : null;
}

/** Returns a directory holding every jar the pom depends on (resolving them on first use). */
export async function resolveJars(pomFile: string, cacheDir: string, name: string): Promise<string> {
  const libDir = libDirOf(pomFile, cacheDir, name);
  const marker = join(libDir, ".complete");
  if (existsSync(marker)) return libDir;
  mkdirSync(libDir, { recursive: true });
  console.error(`infra: resolving ${name} jars from Maven Central (first run only)`);
  await runCommand(["mvn", "-B", "-q", "-f", pomFile, "dependency:copy-dependencies", `-DoutputDirectory=${libDir}`]);
  writeFileSync(marker, new Date().toISOString());
  return libDir;
}

/**
 * A Maven artifact unpacked (an OpenSearch plugin's zip): its directory, unpacked from Maven Central on first use
 * and cached by its coordinates.
 */
export async function resolveUnpacked(artifact: string, cacheDir: string, name: string): Promise<string> {
  const hash = new Bun.CryptoHasher("sha256").update(artifact).digest("hex").slice(0, 16);
  const dir = join(cacheDir, `${name}-${hash}`);
  const marker = join(dir, ".complete");
  if (existsSync(marker)) return dir;
  mkdirSync(dir, { recursive: true });
  console.error(`infra: resolving ${artifact} from Maven Central (first run only)`);
  // Without a pom, `dependency:unpack` keeps its "already unpacked" markers in
  // `<cwd>/${project.basedir}/target/dependency-maven-plugin-markers` and skips, unpacking nothing, any artifact
  // it finds a marker for there: a second cache on the same machine would be marked complete and empty. So it runs
  // in a directory of its own, removed afterwards, and the result is checked before it is marked complete.
  const work = mkdtempSync(join(tmpdir(), "pss-mvn-unpack-"));
  try {
    await runCommand(["mvn", "-B", "-q", "dependency:unpack", `-Dartifact=${artifact}`, `-DoutputDirectory=${dir}`], {
      cwd: work,
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (readdirSync(dir).length === 0) throw new Error(`mvn dependency:unpack of ${artifact} left ${dir} empty`);
  writeFileSync(marker, new Date().toISOString());
  return dir;
}

export function javaBinary(): string {
  return process.env.JAVA_HOME ? join(process.env.JAVA_HOME, "bin", "java") : "java";
}
