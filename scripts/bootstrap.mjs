#!/usr/bin/env node
// Entry point for every npm script. Runs on plain Node.js so a machine with only Node/npm can start:
// installs the pinned Bun (tools/bun, via npm ci), installs workspace dependencies with Bun from the
// committed bun.lock, then hands over to the Bun script named by the first argument.
import { spawnSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const toolDir = join(root, "tools", "bun");
const bunBin = join(toolDir, "node_modules", "bun", "bin", "bun.exe");

const scripts = {
  start: ["scripts/start.ts"],
  test: ["scripts/test.ts"],
  images: ["scripts/images.ts"],
  bench: ["bench/run.ts"],
  admin: ["services/admin/src/cli.ts"],
  infra: ["infra/cli.ts"],
  migrate: ["scripts/migrate.ts"],
  typecheck: ["x", "tsc", "--noEmit", "-p", "."],
  sync: ["packages/sdk/src/cli/main.ts"],
  "sdk:generate": ["scripts/sdk-openapi.ts"],
  "sdk:pack": ["scripts/sdk-pack.ts"],
  "chart:readme": ["scripts/chart-readme.ts"],
  // Biome (biome.jsonc): `lint` checks rules and formatting and changes nothing; `format` rewrites the layout only.
  lint: ["x", "biome", "check", "--error-on-warnings"],
  format: ["scripts/format.ts"],
};
// Commands that take the user's file paths run where the user ran npm (npm itself runs scripts from the root).
const inCallersDirectory = new Set(["sync", "sdk:pack"]);

function run(cmd, args, opts = {}) {
  const result = spawnSync(cmd, args, { cwd: root, stdio: "inherit", ...opts });
  if (result.status !== 0) {
    process.stderr.write(`bootstrap: '${cmd} ${args.join(" ")}' failed (exit ${result.status ?? result.signal})\n`);
    process.exit(result.status ?? 1);
  }
}

function wantedBunVersion() {
  return JSON.parse(readFileSync(join(toolDir, "package.json"), "utf8")).dependencies.bun;
}

function installedBunVersion() {
  if (!existsSync(bunBin)) return null;
  const r = spawnSync(bunBin, ["--version"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : null;
}

const [command, ...rest] = process.argv.slice(2);
if (!scripts[command]) {
  process.stderr.write(`bootstrap: unknown command '${command}'. Known: ${Object.keys(scripts).join(", ")}\n`);
  process.exit(2);
}

// Bootstrap chatter goes to stderr so commands like `npm run --silent admin` keep stdout pure JSON.
const quiet = { stdio: ["ignore", process.stderr, "inherit"] };
if (installedBunVersion() !== wantedBunVersion()) {
  run("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: toolDir, ...quiet });
}
const lockfile = join(root, "bun.lock");
run(bunBin, ["install", ...(existsSync(lockfile) ? ["--frozen-lockfile"] : []), "--silent"], quiet);

const callerDir = inCallersDirectory.has(command) ? (process.env.INIT_CWD ?? process.cwd()) : root;
const [entry, ...entryArgs] = scripts[command];
const entryPath = entry.endsWith(".ts") ? join(root, entry) : entry;
const child = spawn(bunBin, [entryPath, ...entryArgs, ...rest], { cwd: callerDir, stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 + 1 : 1)));
