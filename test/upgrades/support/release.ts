// A previous release's source, materialised once per commit: the release the repository records
// (releases/previous.json: its version and the commit of main it was cut from; fresh clones carry no tags),
// `git archive <commit>` into the cache directory
// (PSS_CACHE_DIR, as the infrastructure runner's downloads: it outlives a fresh clone), with its own workspace
// dependencies installed by the pinned Bun from the release's own bun.lock (`bun install --frozen-lockfile`, as
// scripts/bootstrap.mjs does: the packages come from Bun's cache, else from the npm registry). Several runs on one
// machine may materialise at once: each builds in a directory of its own and renames it into place; the first
// rename wins, the others use it.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { defaultPaths } from "../../../infra/src/index.ts";

export const ROOT = resolve(import.meta.dir, "..", "..", "..");
const READY = ".pss-release-ready";
/** Where the release process records the previous release (docs/upgrades.md, "Releases"). */
export const PREVIOUS_RELEASE_FILE = "releases/previous.json";

/** A release as the repository records it: its version and the commit of main it was cut from. */
export interface RecordedRelease {
  version: string;
  commit: string;
}

export interface Release extends RecordedRelease {
  /** The release's source tree with its node_modules. */
  dir: string;
  /** The Bun the release pins (tools/bun/package.json); the current checkout's binary when the pins agree. */
  bun: string;
}

function git(args: string[], cwd = ROOT): { ok: boolean; out: string; err: string } {
  const r = spawnSync("git", args, { cwd, encoding: "utf8" });
  return { ok: r.status === 0, out: (r.stdout ?? "").trim(), err: (r.stderr ?? "").trim() };
}

function run(cmd: string, args: string[], cwd: string): void {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (r.status !== 0)
    throw new Error(`'${cmd} ${args.join(" ")}' in ${cwd} failed (${r.status ?? r.signal}): ${r.stderr || r.stdout}`);
}

const pinnedBun = (dir: string): string =>
  JSON.parse(readFileSync(join(dir, "tools", "bun", "package.json"), "utf8")).dependencies.bun;
const bunIn = (dir: string) => join(dir, "tools", "bun", "node_modules", "bun", "bin", "bun.exe");

/** The previous release the repository records (releases/previous.json), checked for shape. */
export function previousRelease(root = ROOT): RecordedRelease {
  const file = join(root, PREVIOUS_RELEASE_FILE);
  const recorded = JSON.parse(readFileSync(file, "utf8")) as Partial<RecordedRelease>;
  if (typeof recorded.version !== "string" || !/^v\d+\.\d+\.\d+$/.test(recorded.version))
    throw new Error(`${PREVIOUS_RELEASE_FILE}: "version" must be a release version such as "v1.0.0"`);
  if (typeof recorded.commit !== "string" || !/^[0-9a-f]{40}$/.test(recorded.commit))
    throw new Error(`${PREVIOUS_RELEASE_FILE}: "commit" must be the release's full 40-character commit hash`);
  return { version: recorded.version, commit: recorded.commit };
}

const hasCommit = (commit: string, root: string) => git(["cat-file", "-e", `${commit}^{commit}`], root).ok;

/**
 * Makes sure this clone has the release's commit. A full clone has it (it is a commit of main); a shallow one
 * (`git clone --depth 1`, as some CI systems make) fetches that one commit from `origin` by its hash. Throws, saying
 * what to do, when it cannot be had: the upgrade tests fail rather than skip.
 */
export function ensureReleaseCommit(release: RecordedRelease, root = ROOT): void {
  if (hasCommit(release.commit, root)) return;
  const fetched = git(["fetch", "--quiet", "--no-tags", "--depth", "1", "origin", release.commit], root);
  if (hasCommit(release.commit, root)) return;
  throw new Error(
    `this clone lacks ${release.version}'s commit ${release.commit} (${PREVIOUS_RELEASE_FILE}), and fetching it from origin failed${fetched.err ? `: ${fetched.err.split("\n")[0]}` : ""}; fetch it ('git fetch origin ${release.commit}', or 'git fetch --unshallow' in a shallow clone)`,
  );
}

/** The release's source and dependencies, built on first use (a few seconds) and reused after. */
export function materialiseRelease(release: RecordedRelease): Release {
  ensureReleaseCommit(release);
  const { version, commit } = release;
  const parent = join(defaultPaths(ROOT).cacheDir, "releases");
  const dir = join(parent, `${version}-${commit.slice(0, 12)}`);
  if (!existsSync(join(dir, READY))) {
    mkdirSync(parent, { recursive: true });
    const work = `${dir}.building-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    mkdirSync(work);
    try {
      const archive = spawnSync("sh", ["-c", `git archive --format=tar ${commit} | tar -x -C '${work}'`], {
        cwd: ROOT,
        encoding: "utf8",
      });
      if (archive.status !== 0) throw new Error(`git archive ${version} (${commit}) failed: ${archive.stderr}`);
      // The release's own Bun when it pins another version than this checkout (installed as bootstrap.mjs does).
      const bun = pinnedBun(work) === pinnedBun(ROOT) ? bunIn(ROOT) : bunIn(work);
      if (bun !== bunIn(ROOT))
        run("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], join(work, "tools", "bun"));
      run(bun, ["install", "--frozen-lockfile", "--silent"], work);
      writeFileSync(join(work, READY), `${commit}\n`);
      try {
        renameSync(work, dir);
      } catch (err) {
        // Another run put the same release in place first: use that one.
        if (!existsSync(join(dir, READY))) throw err;
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  const bun = pinnedBun(dir) === pinnedBun(ROOT) ? bunIn(ROOT) : bunIn(dir);
  return { version, commit, dir, bun };
}

/**
 * The long-running services a source tree's docker-compose.yml runs from its image, by name, with the script each
 * runs (`command: ["bun", "<script>"]`): not the one-shots (`restart: "no"`) nor the on-demand tools (a profile).
 */
export function composeServices(root: string): Record<string, string> {
  const compose = Bun.YAML.parse(readFileSync(join(root, "docker-compose.yml"), "utf8")) as {
    services: Record<string, { command?: string[]; restart?: string; profiles?: string[] }>;
  };
  const services: Record<string, string> = {};
  for (const [name, s] of Object.entries(compose.services)) {
    if (s.command?.[0] === "bun" && s.command[1]?.startsWith("services/") && s.restart !== "no" && !s.profiles)
      services[name] = s.command[1];
  }
  return services;
}

/** The services in the order docs/upgrades.md rolls them (its `for s in …; do docker compose up …` loop). */
export function documentedRollOrder(direction: "upgrade" | "rollback" = "upgrade"): string[] {
  const docs = readFileSync(join(ROOT, "docs", "upgrades.md"), "utf8");
  const heading = direction === "upgrade" ? "## Upgrading" : "## Rolling back";
  const section = docs.slice(docs.indexOf(heading), docs.indexOf("\n## ", docs.indexOf(heading) + heading.length));
  const loop = /for s in ([a-z -]+); do docker compose up -d --no-deps --wait "\$s"; done/.exec(section);
  if (!loop)
    throw new Error(
      `docs/upgrades.md, "${heading.slice(3)}", has no 'for s in …; do docker compose up -d --no-deps --wait' loop`,
    );
  return loop[1]!.trim().split(/\s+/);
}
