// A previous release's source, materialised once per commit: `git archive <tag>` into the cache directory
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

export interface Release {
  tag: string;
  commit: string;
  /** The release's source tree with its node_modules. */
  dir: string;
  /** The Bun the release pins (tools/bun/package.json); the current checkout's binary when the pins agree. */
  bun: string;
}

function git(args: string[]): { ok: boolean; out: string } {
  const r = spawnSync("git", args, { cwd: ROOT, encoding: "utf8" });
  return { ok: r.status === 0, out: (r.stdout ?? "").trim() };
}

function run(cmd: string, args: string[], cwd: string): void {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (r.status !== 0)
    throw new Error(`'${cmd} ${args.join(" ")}' in ${cwd} failed (${r.status ?? r.signal}): ${r.stderr || r.stdout}`);
}

const pinnedBun = (dir: string): string =>
  JSON.parse(readFileSync(join(dir, "tools", "bun", "package.json"), "utf8")).dependencies.bun;
const bunIn = (dir: string) => join(dir, "tools", "bun", "node_modules", "bun", "bin", "bun.exe");

/** Why the release cannot be had from this clone (a shallow CI clone has no tags), or null. */
export function releaseMissing(tag: string): string | null {
  return git(["rev-parse", "--verify", "--quiet", `${tag}^{commit}`]).ok
    ? null
    : `this clone has no git tag ${tag} (a shallow clone? 'git fetch --tags' brings it)`;
}

/** The release's source and dependencies, built on first use (a few seconds) and reused after. */
export function materialiseRelease(tag: string): Release {
  const { ok, out: commit } = git(["rev-parse", "--verify", "--quiet", `${tag}^{commit}`]);
  if (!ok) throw new Error(releaseMissing(tag)!);
  const parent = join(defaultPaths(ROOT).cacheDir, "releases");
  const dir = join(parent, `${tag}-${commit.slice(0, 12)}`);
  if (!existsSync(join(dir, READY))) {
    mkdirSync(parent, { recursive: true });
    const work = `${dir}.building-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    mkdirSync(work);
    try {
      const archive = spawnSync("sh", ["-c", `git archive --format=tar ${commit} | tar -x -C '${work}'`], {
        cwd: ROOT,
        encoding: "utf8",
      });
      if (archive.status !== 0) throw new Error(`git archive ${tag} failed: ${archive.stderr}`);
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
  return { tag, commit, dir, bun };
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
