// Reads a Dockerfile well enough to answer one question: is every file `bun install --frozen-lockfile`
// reads copied from the build context to where the install runs, before it runs? Understands FROM (stage
// inheritance), WORKDIR, COPY/ADD (files, directories, globs, `--from=<stage>`, JSON form) and .dockerignore.
import { existsSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";

/** One COPY source placed in the image: `source` is a build-context path (file, directory, glob) or "." */
interface Placement {
  source: string;
  /** Absolute path in the image. */
  dest: string;
  /** The destination is a directory the source goes into (trailing slash or several sources). */
  intoDir: boolean;
}

interface Stage {
  name: string;
  workdir: string;
  placements: Placement[];
}

export interface InstallStep {
  stage: string;
  workdir: string;
  line: string;
  /** Context files present at workdir-relative paths when the step runs. */
  placements: Placement[];
}

/** Instructions with continuation lines joined and comments dropped. */
export function instructions(dockerfile: string): { keyword: string; args: string }[] {
  const out: { keyword: string; args: string }[] = [];
  let current = "";
  for (const raw of dockerfile.split("\n")) {
    const line = raw.trim();
    if (line.startsWith("#") || (line === "" && current === "")) continue;
    if (line.endsWith("\\")) {
      current += line.slice(0, -1) + " ";
      continue;
    }
    current += line;
    const m = /^(\S+)\s*(.*)$/s.exec(current.trim());
    if (m) out.push({ keyword: m[1]!.toUpperCase(), args: m[2]! });
    current = "";
  }
  return out;
}

function words(args: string): string[] {
  const trimmed = args.trim();
  if (trimmed.startsWith("[")) return JSON.parse(trimmed) as string[];
  return trimmed.split(/\s+/).filter(Boolean);
}

const normalize = (p: string) =>
  posix
    .normalize(p)
    .replace(/\/+$/, "")
    .replace(/^\.\/?/, "") || ".";

/** Every stage that runs `bun install`, with what had been copied in by then. */
export function installSteps(dockerfile: string): InstallStep[] {
  const stages = new Map<string, Stage>();
  const steps: InstallStep[] = [];
  let stage: Stage | null = null;
  let index = 0;
  for (const { keyword, args } of instructions(dockerfile)) {
    if (keyword === "FROM") {
      const [image, as, name] = words(args.replace(/--platform=\S+\s*/, ""));
      const parent = stages.get(image!);
      stage = {
        name: as?.toUpperCase() === "AS" && name ? name : String(index),
        workdir: parent?.workdir ?? "/",
        placements: [...(parent?.placements ?? [])],
      };
      stages.set(stage.name, stage);
      index += 1;
      continue;
    }
    if (!stage) continue;
    if (keyword === "WORKDIR") stage.workdir = posix.resolve(stage.workdir, args.trim());
    if (keyword === "COPY" || keyword === "ADD") {
      const all = words(args);
      const flags = all.filter((w) => w.startsWith("--"));
      const paths = all.filter((w) => !w.startsWith("--"));
      const dest = paths.pop()!;
      // "." names the working directory, which exists: a file goes into it, as with a trailing slash.
      const intoDir = dest.endsWith("/") || dest === "." || dest.endsWith("/.") || paths.length > 1;
      const absDest = posix.resolve(stage.workdir, dest);
      const from = flags.find((f) => f.startsWith("--from="))?.slice("--from=".length);
      if (from !== undefined) {
        // From another stage: only what that stage itself copied from the context is known.
        const source = stages.get(from);
        for (const p of source?.placements ?? []) {
          for (const src of paths) {
            const absSrc = posix.resolve(source!.workdir, src);
            if (p.dest === absSrc || p.dest.startsWith(absSrc + "/") || absSrc === "/") {
              stage.placements.push({ ...p, dest: posix.join(absDest, posix.relative(absSrc, p.dest)) });
            }
          }
        }
      } else {
        for (const src of paths) stage.placements.push({ source: normalize(src), dest: absDest, intoDir });
      }
    }
    if (keyword === "RUN" && /\bbun\s+install\b/.test(args)) {
      steps.push({ stage: stage.name, workdir: stage.workdir, line: args, placements: [...stage.placements] });
    }
  }
  return steps;
}

/** Where `file` (a context path) lands through `p`, or null when `p` does not copy it. */
function landing(file: string, p: Placement): string | null {
  if (p.source === ".") return posix.join(p.dest, file);
  if (/[*?[]/.test(p.source))
    return new Bun.Glob(p.source).match(file) ? posix.join(p.dest, posix.basename(file)) : null;
  if (file === p.source) return p.intoDir ? posix.join(p.dest, posix.basename(file)) : p.dest;
  if (file.startsWith(p.source + "/")) return posix.join(p.dest, file.slice(p.source.length + 1));
  return null;
}

/** True when a .dockerignore pattern keeps `file` (or a directory above it) out of the build context. */
export function ignoredByDockerignore(file: string, dockerignore: string): boolean {
  let ignored = false;
  const parts = file.split("/");
  for (const raw of dockerignore.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const negated = line.startsWith("!");
    const pattern = normalize(negated ? line.slice(1) : line);
    const glob = new Bun.Glob(pattern);
    const hit = parts.some((_, i) => glob.match(parts.slice(0, i + 1).join("/")));
    if (hit) ignored = !negated;
  }
  return ignored;
}

/** For each install step: the required files that are not in place (at workdir/<file>) when it runs. */
export function missingInstallInputs(
  dockerfile: string,
  required: string[],
  dockerignore = "",
): { stage: string; missing: string[] }[] {
  return installSteps(dockerfile).map((step) => ({
    stage: step.stage,
    missing: required.filter((file) => {
      if (ignoredByDockerignore(file, dockerignore)) return true;
      const target = posix.join(step.workdir, file);
      return !step.placements.some((p) => landing(file, p) === target);
    }),
  }));
}

/**
 * What `bun install --frozen-lockfile` reads from a checkout: the root manifest, bun.lock, bunfig.toml (and
 * .npmrc when present), every patchedDependencies patch, and the manifest of every workspace.
 */
export function requiredInstallInputs(root: string): string[] {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    workspaces?: string[] | { packages?: string[] };
    patchedDependencies?: Record<string, string>;
  };
  const files = ["package.json", "bun.lock", "bunfig.toml"];
  if (existsSync(join(root, ".npmrc"))) files.push(".npmrc");
  files.push(...Object.values(manifest.patchedDependencies ?? {}).map(normalize));
  const globs = Array.isArray(manifest.workspaces) ? manifest.workspaces : (manifest.workspaces?.packages ?? []);
  for (const pattern of globs) {
    const found = [...new Bun.Glob(`${normalize(pattern)}/package.json`).scanSync({ cwd: root, onlyFiles: true })];
    files.push(...found.filter((f) => !f.split("/").includes("node_modules")).sort());
  }
  return files;
}
