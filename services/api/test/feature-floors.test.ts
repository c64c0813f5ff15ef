// The house rule of services/api (docs/architecture.md, "The API's floors"): its feature folders stand on floors,
// and a feature imports only from floors below its own, never from its own floor's neighbours or from above. So a
// contributor can tell where a change belongs, and no import runs back up. The composition roots (app.ts, main.ts,
// config.ts, relay-main.ts) sit on top of everything. A new folder must be given a floor here (and in the doc).
import { expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, posix, relative } from "node:path";

const SRC = join(import.meta.dir, "..", "src");

/** Bottom first. */
export const FLOORS: readonly (readonly string[])[] = [
  ["http"],
  ["records", "docs", "request-log"],
  ["history", "partner"],
  ["lead-counts", "batch"],
  ["health", "brokers"],
  ["listings"],
  ["reports", "stats", "feed", "test-mode", "webhooks"],
  ["admin", "outbox", "cluster", "reads"],
  ["portal-users"],
];
const ROOTS = ["app.ts", "main.ts", "config.ts", "relay-main.ts"];

const floorOf = (name: string) => (ROOTS.includes(name) ? FLOORS.length : FLOORS.findIndex((f) => f.includes(name)));

/** Every runtime and type import between two top-level entries of src (folders or root files), as "from -> to". */
export function featureImports(
  files: { path: string; source: string }[],
): { from: string; to: string; file: string }[] {
  const out: { from: string; to: string; file: string }[] = [];
  for (const { path, source } of files) {
    for (const m of source.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+["'](\.{1,2}\/[^"']+)["']/gm)) {
      const target = posix.normalize(posix.join(posix.dirname(path), m[1]!));
      const from = path.split("/")[0]!;
      const to = target.split("/")[0]!;
      if (from !== to) out.push({ from, to, file: path });
    }
  }
  return out;
}

function sources(): { path: string; source: string }[] {
  const out: { path: string; source: string }[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name.endsWith(".ts") && !name.endsWith(".test.ts"))
        out.push({ path: relative(SRC, full).split("\\").join("/"), source: readFileSync(full, "utf8") });
    }
  };
  walk(SRC);
  return out;
}

test("every folder and root file of services/api/src has a floor", () => {
  const entries = readdirSync(SRC).filter((n) => !n.endsWith(".test.ts"));
  expect(entries.filter((n) => floorOf(n) < 0)).toEqual([]);
  // And every floor named here exists: a folder that went away leaves the list too.
  expect(FLOORS.flat().filter((n) => !entries.includes(n))).toEqual([]);
});

test("in services/api a feature imports only what sits on a floor below its own", () => {
  const upward = featureImports(sources())
    // The composition roots wire everything, each other included.
    .filter(({ from, to }) => !ROOTS.includes(from) && floorOf(to) >= floorOf(from))
    .map(({ from, to, file }) => `${file}: ${from} (floor ${floorOf(from)}) imports ${to} (floor ${floorOf(to)})`);
  expect(upward).toEqual([]);
});

test("the rule sees an import that runs back up, and one between neighbours on a floor", () => {
  const found = featureImports([
    { path: "partner/partner-context.ts", source: 'import type { X } from "../listings/listing-service.ts";' },
    {
      path: "stats/stats-routes.ts",
      source: 'import { y } from "../reports/report-routes.ts";\nimport { z } from "./x.ts";',
    },
    { path: "listings/listing-routes.ts", source: 'export { w } from "../records/changes.ts";' },
  ]);
  expect(found.map(({ from, to }) => `${from}->${to} ${floorOf(to) >= floorOf(from)}`)).toEqual([
    "partner->listings true",
    "stats->reports true",
    "listings->records false",
  ]);
});
