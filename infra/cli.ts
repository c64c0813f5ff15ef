#!/usr/bin/env bun
// Local infrastructure for machines without a Docker engine: `up`, `down`, `status`, `logs [name]`.
import { existsSync, readFileSync } from "node:fs";
import { components, defaultPaths, down, status, up } from "./src/index.ts";

const [command, arg] = process.argv.slice(2);

async function main(): Promise<number> {
  switch (command) {
    case "up": {
      const started = Date.now();
      const urls = await up();
      console.error(`infra: ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      for (const [k, v] of Object.entries(urls)) console.log(`${k}=${v}`);
      return 0;
    }
    case "down":
      await down();
      console.error("infra: stopped");
      return 0;
    case "status": {
      const rows = await status();
      for (const r of rows) console.log(`${r.name.padEnd(11)} ${r.ready ? "ready  " : r.running ? "running" : "stopped"} ${r.url}  log: ${r.log}`);
      return rows.every((r) => r.ready) ? 0 : 1;
    }
    case "logs": {
      const list = components(defaultPaths()).filter((c) => !arg || c.name === arg);
      if (list.length === 0) {
        console.error(`infra: unknown part '${arg}' (postgres, redis, kafka, opensearch)`);
        return 2;
      }
      for (const c of list) {
        console.log(`==> ${c.name}: ${c.logFile}`);
        if (existsSync(c.logFile)) console.log(readFileSync(c.logFile, "utf8").split("\n").slice(-60).join("\n"));
      }
      return 0;
    }
    default:
      console.error("usage: infra <up|down|status|logs [postgres|redis|kafka|opensearch]>");
      return 2;
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error((err as Error).message);
    process.exit(1);
  },
);
