// Builds the stack's images without an image registry (npm run images): a Debian base made with debootstrap from the
// mirror apt uses, then images/<name>/Dockerfile on top of it with files fetched on the host (Maven Central jars,
// the pinned Bun binary, production dependencies from bun.lock) copied into each build context. Each tag carries a
// hash of everything its build reads, so an image whose inputs did not change is not built again; the debootstrap
// root filesystem is cached in ~/.cache/partner-syndication-service/images/. Nothing here needs either cache.
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative } from "node:path";
import { defaultPaths } from "../../infra/src/index.ts";
import { resolveJars } from "../../infra/src/maven.ts";
import { runCommand } from "../../infra/src/process.ts";
import { aptInstall } from "../../infra/src/system-packages.ts";
import { IMAGE_VARIABLES, type ImageVariable } from "./image-variables.ts";

const ROOT = join(import.meta.dir, "..", "..");
const IMAGES_DIR = join(ROOT, "images");
/** Bump to rebuild every image (a change to how images are made that their files do not show). */
const RECIPE = "1";

type Name =
  | "debian"
  | "postgres"
  | "redis"
  | "java"
  | "bun"
  | "kafka"
  | "opensearch"
  | "s3proxy"
  | "smtp-sink"
  | "balancer"
  | "prometheus"
  | "zipkin"
  | "service";

interface Spec {
  name: Name;
  parent: Name;
  variable?: ImageVariable;
  /** Puts what the build needs besides images/<name>/ into the context; returns what identifies it (for the tag). */
  prepare?: (ctx: string) => Promise<string>;
  /** What identifies those extra inputs without preparing them (so an unchanged image costs nothing). */
  identify?: () => Promise<string>;
}

export interface BuiltImages {
  /** Compose's image variable → local tag. */
  variables: Record<ImageVariable, string>;
  /** Seconds each image took to build (0: it was there already). */
  seconds: Record<string, number>;
}

export async function buildImages(opts: { log: (line: string) => void }): Promise<BuiltImages> {
  const cacheDir = join(defaultPaths().cacheDir, "images");
  mkdirSync(cacheDir, { recursive: true });
  const tags = new Map<Name, string>();
  const seconds: Record<string, number> = {};

  const started = Date.now();
  tags.set("debian", await debianBase(cacheDir, opts.log));
  seconds.debian = (Date.now() - started) / 1000;

  const jars = (name: string) => ({
    identify: async () =>
      basename(await resolveJars(join(ROOT, "infra", "maven", name, "pom.xml"), defaultPaths().cacheDir, name)),
    prepare: async (ctx: string) => {
      const libs = await resolveJars(join(ROOT, "infra", "maven", name, "pom.xml"), defaultPaths().cacheDir, name);
      cpSync(libs, join(ctx, "lib"), { recursive: true, filter: (src) => !src.endsWith(".complete") });
      return basename(libs);
    },
  });
  const levels: Spec[][] = [
    [
      { name: "postgres", parent: "debian", variable: "PSS_POSTGRES_IMAGE" },
      { name: "redis", parent: "debian", variable: "PSS_REDIS_IMAGE" },
      { name: "balancer", parent: "debian", variable: "PSS_BALANCER_IMAGE" },
      { name: "prometheus", parent: "debian", variable: "PSS_PROMETHEUS_IMAGE" },
      { name: "java", parent: "debian" },
      { name: "bun", parent: "debian", identify: bunIdentity, prepare: prepareBun },
    ],
    [
      { name: "kafka", parent: "java", variable: "PSS_KAFKA_IMAGE", ...jars("kafka") },
      { name: "opensearch", parent: "java", variable: "PSS_OPENSEARCH_IMAGE", ...jars("opensearch") },
      { name: "s3proxy", parent: "java", variable: "PSS_S3_IMAGE", ...jars("s3proxy") },
      { name: "zipkin", parent: "java", variable: "PSS_ZIPKIN_IMAGE", ...jars("zipkin") },
      {
        name: "smtp-sink",
        parent: "bun",
        variable: "PSS_SMTP_IMAGE",
        identify: async () => smtpModules().join(","),
        prepare: prepareSmtpSink,
      },
      { name: "service", parent: "bun", variable: "PSS_IMAGE", identify: serviceIdentity, prepare: prepareService },
    ],
  ];
  // The images of one level are independent: their builds overlap (most of the time is downloads and copies).
  for (const level of levels) {
    await Promise.all(
      level.map(async (spec) => {
        const t0 = Date.now();
        const { tag, built } = await buildOne(spec, tags.get(spec.parent)!, cacheDir, opts.log);
        tags.set(spec.name, tag);
        seconds[spec.name] = built ? (Date.now() - t0) / 1000 : 0;
      }),
    );
  }
  const variables = Object.fromEntries(IMAGE_VARIABLES.map((v) => [v.name, tags.get(v.image as Name)!])) as Record<
    ImageVariable,
    string
  >;
  return { variables, seconds };
}

async function imageExists(tag: string): Promise<boolean> {
  const proc = Bun.spawn(["docker", "image", "inspect", tag], { stdout: "ignore", stderr: "ignore" });
  return (await proc.exited) === 0;
}

/** The tags an earlier build of this image left (a container still using one keeps it: rmi then fails, harmlessly). */
async function removeOlderTags(repository: string, keep: string): Promise<void> {
  const out = await runCommand(["docker", "images", "--format", "{{.Repository}}:{{.Tag}}", repository]).catch(
    () => "",
  );
  const old = out.split("\n").filter((t) => t && t !== keep);
  if (old.length > 0) await Bun.spawn(["docker", "rmi", ...old], { stdout: "ignore", stderr: "ignore" }).exited;
}

function hashOf(parts: string[]): string {
  const h = new Bun.CryptoHasher("sha256");
  for (const p of parts) h.update(p).update("\0");
  return h.digest("hex").slice(0, 16);
}

/** Every file under dir (relative path and content), for the tag's hash. */
function filesOf(dir: string, skip: (rel: string) => boolean = () => false): string[] {
  const out: string[] = [];
  for (const rel of [...new Bun.Glob("**/*").scanSync({ cwd: dir, dot: true, onlyFiles: true })].sort()) {
    if (skip(rel)) continue;
    const stat = statSync(join(dir, rel));
    out.push(rel, String(stat.mode & 0o111), readFileSync(join(dir, rel), "utf8"));
  }
  return out;
}

async function buildOne(
  spec: Spec,
  parentTag: string,
  cacheDir: string,
  log: (line: string) => void,
): Promise<{ tag: string; built: boolean }> {
  const recipeDir = join(IMAGES_DIR, spec.name);
  const identity = spec.identify ? await spec.identify() : "";
  const tag = `pss-local/${spec.name}:${hashOf([RECIPE, parentTag, identity, ...filesOf(recipeDir)])}`;
  if (await imageExists(tag)) return { tag, built: false };
  const ctx = mkdtempSync(join(cacheDir, `ctx-${spec.name}-`));
  try {
    cpSync(recipeDir, ctx, { recursive: true });
    if (spec.prepare) await spec.prepare(ctx);
    const t0 = Date.now();
    log(`building ${tag}`);
    // The classic builder: Debian's docker.io has no buildx, and BuildKit would fetch its Dockerfile frontend image.
    await runCommand(
      [
        "docker",
        "build",
        "--quiet",
        "--build-arg",
        `BASE_IMAGE=${parentTag}`,
        "--label",
        `org.opencontainers.image.source=images/${spec.name}`,
        "-t",
        tag,
        ctx,
      ],
      { env: { DOCKER_BUILDKIT: "0" } },
    );
    log(`built ${tag} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
  await removeOlderTags(`pss-local/${spec.name}`, tag);
  return { tag, built: true };
}

// ---------------------------------------------------------------------------------------------------------------
// Debian base: debootstrap --variant=minbase from the mirror and with the apt settings of this machine.

function aptSourceFiles(): string[] {
  const files = ["/etc/apt/sources.list"].filter(existsSync);
  if (existsSync("/etc/apt/sources.list.d"))
    for (const f of readdirSync("/etc/apt/sources.list.d"))
      if (/\.(list|sources)$/.test(f)) files.push(`/etc/apt/sources.list.d/${f}`);
  return files;
}

/** apt.conf.d files that carry this machine's settings (proxies, snapshot date checks), not desktop hooks. */
function aptConfFiles(): string[] {
  const dir = "/etc/apt/apt.conf.d";
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => !/packagekit|appstream|docker-|autoremove/.test(f))
    .map((f) => `${dir}/${f}`);
}

function mirror(): string {
  for (const file of aptSourceFiles()) {
    const text = readFileSync(file, "utf8");
    const uri = /^URIs:\s*(\S+)/m.exec(text)?.[1] ?? /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+\S+/m.exec(text)?.[1];
    if (uri && !/security/.test(uri)) return uri;
  }
  return "http://deb.debian.org/debian";
}

async function debianBase(cacheDir: string, log: (line: string) => void): Promise<string> {
  const inputs = [...aptSourceFiles(), ...aptConfFiles()].flatMap((f) => [f, readFileSync(f, "utf8")]);
  const hash = hashOf([RECIPE, "bookworm-minbase", mirror(), ...inputs]);
  const tag = `pss-local/debian:bookworm-${hash}`;
  if (await imageExists(tag)) return tag;
  const tarball = join(cacheDir, `debian-bookworm-${hash}.tar`);
  if (!existsSync(tarball)) {
    if (!Bun.which("debootstrap") && !existsSync("/usr/sbin/debootstrap")) await aptInstall(["debootstrap"]);
    const t0 = Date.now();
    log(`debootstrap bookworm (minbase) from ${mirror()}`);
    const rootfs = mkdtempSync(join(tmpdir(), "pss-debian-"));
    try {
      await runCommand(["debootstrap", "--variant=minbase", "bookworm", rootfs, mirror()]);
      for (const file of [...aptSourceFiles(), ...aptConfFiles()]) cpSync(file, join(rootfs, file));
      if (existsSync("/etc/apt/trusted.gpg.d"))
        cpSync("/etc/apt/trusted.gpg.d", join(rootfs, "etc/apt/trusted.gpg.d"), { recursive: true });
      // Lean images: no recommends, no cached .debs, no translations (as Debian's own container images do).
      writeFileSync(
        join(rootfs, "etc/apt/apt.conf.d/90pss-image"),
        'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\nAcquire::Languages "none";\nDPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb || true"; };\n',
      );
      rmSync(join(rootfs, "var/cache/apt/archives"), { recursive: true, force: true });
      mkdirSync(join(rootfs, "var/cache/apt/archives/partial"), { recursive: true });
      rmSync(join(rootfs, "var/lib/apt/lists"), { recursive: true, force: true });
      mkdirSync(join(rootfs, "var/lib/apt/lists/partial"), { recursive: true });
      await runCommand(["tar", "-C", rootfs, "--numeric-owner", "-cf", `${tarball}.part`, "."]);
      renameSync(`${tarball}.part`, tarball);
    } finally {
      rmSync(rootfs, { recursive: true, force: true });
    }
    log(`debootstrap done in ${((Date.now() - t0) / 1000).toFixed(0)} s (cached: ${tarball})`);
  }
  await runCommand(["docker", "import", "--change", 'CMD ["/bin/bash"]', "--change", "ENV LANG=C.UTF-8", tarball, tag]);
  return tag;
}

// ---------------------------------------------------------------------------------------------------------------
// Bun: the binary of the pinned `bun` npm package (tools/bun), the one this command runs on.

function bunBinary(): string {
  const pinned = join(ROOT, "tools", "bun", "node_modules", "bun", "bin", "bun.exe");
  return existsSync(pinned) ? pinned : process.execPath;
}

async function bunIdentity(): Promise<string> {
  return `${Bun.version}:${statSync(bunBinary()).size}`;
}

async function prepareBun(ctx: string): Promise<string> {
  cpSync(bunBinary(), join(ctx, "bun"));
  return bunIdentity();
}

// ---------------------------------------------------------------------------------------------------------------
// SMTP sink: smtp-server and its dependencies as bun.lock installed them (node_modules/.bun/<pkg>@<version>).

function smtpModules(): string[] {
  return readdirSync(join(ROOT, "node_modules", ".bun"))
    .filter((d) => d.startsWith("smtp-server@"))
    .sort();
}

async function prepareSmtpSink(ctx: string): Promise<string> {
  const [dir] = smtpModules();
  if (!dir) throw new Error("smtp-server is not installed in node_modules (run npm test or npm run typecheck once)");
  // The package's own node_modules holds it and links to its dependencies: copy it with the links resolved.
  cpSync(join(ROOT, "node_modules", ".bun", dir, "node_modules"), join(ctx, "node_modules"), {
    recursive: true,
    dereference: true,
  });
  return dir;
}

// ---------------------------------------------------------------------------------------------------------------
// The service image: production dependencies only, from bun.lock, plus the workspaces' sources.

const INSTALL_INPUTS = ["package.json", "bun.lock", "bunfig.toml"];
const SOURCE_DIRS = ["packages", "services"];
const skipSource = (rel: string) => rel.split("/").includes("node_modules") || rel.endsWith(".log");

function workspaceManifests(): string[] {
  return ["packages", "services"]
    .flatMap((d) => readdirSync(join(ROOT, d)).map((w) => `${d}/${w}/package.json`))
    .concat("infra/package.json")
    .filter((f) => existsSync(join(ROOT, f)));
}

async function serviceIdentity(): Promise<string> {
  const parts = [
    Bun.version,
    ...[...INSTALL_INPUTS, "tsconfig.json", ...workspaceManifests()].flatMap((f) => [
      f,
      readFileSync(join(ROOT, f), "utf8"),
    ]),
  ];
  parts.push(...filesOf(join(ROOT, "patches")));
  for (const dir of SOURCE_DIRS) parts.push(...filesOf(join(ROOT, dir), skipSource));
  return hashOf(parts);
}

async function prepareService(ctx: string): Promise<string> {
  const app = join(ctx, "app");
  mkdirSync(app, { recursive: true });
  for (const f of [...INSTALL_INPUTS, ...workspaceManifests()]) {
    mkdirSync(dirname(join(app, f)), { recursive: true });
    cpSync(join(ROOT, f), join(app, f));
  }
  cpSync(join(ROOT, "patches"), join(app, "patches"), { recursive: true });
  await runCommand([bunBinary(), "install", "--frozen-lockfile", "--production", "--silent"], { cwd: app });
  cpSync(join(ROOT, "tsconfig.json"), join(app, "tsconfig.json"));
  for (const dir of SOURCE_DIRS)
    cpSync(join(ROOT, dir), join(app, dir), { recursive: true, filter: (src) => !skipSource(relative(ROOT, src)) });
  return serviceIdentity();
}
