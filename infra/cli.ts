#!/usr/bin/env bun
// Local infrastructure for machines without a Docker engine: `up`, `down`, `status`, `logs`, each for one
// part (postgres, redis, kafka, opensearch, s3, zipkin) when it is named, otherwise for all of them; zipkin, the
// optional trace store, only when named (or running, for status and down).
import { existsSync, readFileSync } from "node:fs";
import {
  components,
  defaultPaths,
  down,
  ensureOpenssl,
  isPartName,
  PART_NAMES,
  securedProfile,
  status,
  up,
  type PartName,
} from "./src/index.ts";

const USAGE = `usage: infra <up|down|status|logs> [--secured] [${PART_NAMES.join("|")}]`;
const [command, ...given] = process.argv.slice(2);
// --secured: the secured profile (TLS, passwords, a 3-node Kafka cluster) under .data/secured, on its own ports,
// beside the default one (infra/src/secured/profile.ts).
if (given.includes("--secured")) await ensureOpenssl();
const secured = given.includes("--secured") ? securedProfile(defaultPaths()) : undefined;
const args = given.filter((a) => a !== "--secured");

/** The named part as a one-element list, [] for "all", or null (after printing why) when the arguments are wrong. */
function parseParts(): PartName[] | null {
  if (args.length > 1) {
    console.error(`infra: name at most one part\n${USAGE}`);
    return null;
  }
  const [name] = args;
  if (name === undefined) return [];
  if (!isPartName(name)) {
    console.error(`infra: unknown part '${name}' (known: ${PART_NAMES.join(", ")})`);
    return null;
  }
  return [name];
}

function withoutPassword(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]+):[^@]*@/, "$1:***@");
}

async function main(): Promise<number> {
  if (!["up", "down", "status", "logs"].includes(command ?? "")) {
    console.error(USAGE);
    return 2;
  }
  const parts = parseParts();
  if (parts === null) return 2;
  const what = parts.length ? parts.join(", ") : "all parts";
  switch (command) {
    case "up": {
      const started = Date.now();
      // The secured profile's URLs stand for the default ones: whatever URL is set in the environment is not its own.
      const urls = await up(secured ? {} : process.env, defaultPaths(), parts, secured);
      console.error(`infra: ${what} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      // Every URL, not only the started part's, so `eval "$(npm run --silent infra -- up)"` always works.
      for (const [k, v] of Object.entries(urls)) console.log(`${k}=${v}`);
      return 0;
    }
    case "down":
      await down(defaultPaths(), parts, secured);
      console.error(`infra: ${what} stopped`);
      return 0;
    case "status": {
      const rows = await status(defaultPaths(), parts, secured);
      // The secured profile's passwords are generated and secret: `up` prints them for `eval`, `status` does not.
      for (const r of rows)
        console.log(
          `${r.name.padEnd(11)} ${r.ready ? "ready  " : r.running ? "running" : "stopped"} ${secured ? withoutPassword(r.url) : r.url}  log: ${r.log}`,
        );
      return rows.every((r) => r.ready) ? 0 : 1;
    }
    default: {
      for (const c of components(defaultPaths(), secured).filter((c) => parts.length === 0 || parts.includes(c.name)))
        for (const file of c.logFile.split(", ")) {
          console.log(`==> ${c.name}: ${file}`);
          if (existsSync(file)) console.log(readFileSync(file, "utf8").split("\n").slice(-60).join("\n"));
        }
      return 0;
    }
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error((err as Error).message);
    process.exit(1);
  },
);
