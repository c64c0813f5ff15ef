// `npm run bench [-- <scenario>...] [--duration N] [--warmup N]`: brings up what it needs like `npm start`,
// runs the scenarios, prints a Markdown table, and writes bench/results/<timestamp>.json and docs/benchmarks.md.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { createBenchContext, type BenchContext } from "./lib/context.ts";
import { ROOT } from "./lib/processes.ts";
import type { Row } from "./lib/result.ts";
import { TARGETS, targetText, type TargetId } from "./lib/targets.ts";
import { health } from "./scenarios/health.ts";
import { partnerWrites } from "./scenarios/partner-writes.ts";
import { putScaling } from "./scenarios/put-scaling.ts";
import { consumerRates } from "./scenarios/consumer-rates.ts";
import { apiWorkers } from "./scenarios/api-workers.ts";
import { batchWrites } from "./scenarios/batch-writes.ts";
import { feedRead } from "./scenarios/feed-read.ts";
import { buyerPages } from "./scenarios/buyer-pages.ts";
import { marketplaceSearch } from "./scenarios/marketplace-search.ts";
import { portalPages } from "./scenarios/portal-pages.ts";
import { requestLogCost } from "./scenarios/request-log-cost.ts";

type Scenario = (ctx: BenchContext) => Promise<Row[]>;

/** Scenarios owned by other features run as their own scripts and print one JSON line. */
function script(file: string, fallbackName: string): Scenario {
  return async (ctx) => {
    const path = join(ROOT, "bench", file);
    if (!existsSync(path))
      return [{ scenario: fallbackName, figure: NaN, unit: "", target: "", pass: null, notes: `${file} not present` }];
    const proc = Bun.spawn([process.execPath, path], {
      cwd: ROOT,
      env: { ...process.env, ...ctx.urls, BENCH_DURATION: String(ctx.durationSeconds) },
      stdout: "pipe",
      stderr: "inherit",
    });
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    // One JSON line per row (a script may measure several rows in one run).
    const lines = out
      .trim()
      .split("\n")
      .filter((l) => l.startsWith("{"));
    if (code !== 0 || lines.length === 0)
      return [
        {
          scenario: fallbackName,
          figure: NaN,
          unit: "",
          target: "",
          pass: false,
          notes: `${file} failed (exit ${code})`,
        },
      ];
    return lines.map((line) => {
      const r = JSON.parse(line);
      return {
        scenario: r.scenario ?? fallbackName,
        figure: r.figure,
        unit: r.unit ?? "",
        baseline: r.baseline ?? r.baselineP99,
        baselineLabel: r.baselineLabel,
        ratio: r.ratio,
        target: String(r.target ?? ""),
        pass: r.pass ?? (r.ratio !== undefined && r.target !== undefined ? r.ratio >= r.target : null),
        notes: r.notes ?? describeExtras(r),
        ...(r.targetId in TARGETS ? { targetId: r.targetId as TargetId } : {}),
        ...(r.targetPart ? { targetPart: String(r.targetPart) } : {}),
      };
    });
  };
}

function describeExtras(r: Record<string, unknown>): string {
  return Object.entries(r)
    .filter(([k]) => !["scenario", "figure", "unit", "baseline", "ratio", "target", "pass", "targetId"].includes(k))
    .map(([k, v]) => `${k} ${typeof v === "number" ? Math.round(v * 100) / 100 : v}`)
    .join(", ");
}

// put-scaling runs last: seeding a million rows leaves the database busy (autovacuum, checkpoints).
const SCENARIOS: Record<string, Scenario> = {
  health,
  "partner-writes": partnerWrites,
  "put-to-searchable": script("put-to-searchable.ts", "PUT-to-searchable"),
  media: script("media.ts", "photos through the media service"),
  "media-instances": script("media-instances.ts", "media throughput, two instances vs one"),
  "media-delivery": script("media-delivery.ts", "variant GET, MEDIA_DELIVERY=redirect vs api"),
  "lead-count": script("lead-count.ts", "lead count, 10 M leads"),
  "consumer-rates": consumerRates,
  "api-workers": apiWorkers,
  "batch-writes": batchWrites,
  "feed-read": feedRead,
  "buyer-pages": buyerPages,
  "marketplace-search": marketplaceSearch,
  "portal-pages": portalPages,
  "request-log": requestLogCost,
  sync: script("sync.ts", "pss-sync, 10,000-listing feed"),
  purge: script("purge.ts", "test-data purge, 1M leads"),
  "put-scaling": putScaling,
};

function parseArgs(argv: string[]) {
  const names: string[] = [];
  let duration = Number(process.env.BENCH_DURATION ?? 15);
  let warmup = 3;
  let smoke = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--smoke") smoke = true;
    else if (a === "--duration") duration = Number(argv[++i]);
    else if (a === "--warmup") warmup = Number(argv[++i]);
    else names.push(a);
  }
  for (const n of names)
    if (!SCENARIOS[n]) throw new Error(`unknown scenario '${n}'; known: ${Object.keys(SCENARIOS).join(", ")}`);
  return { names: names.length ? names : Object.keys(SCENARIOS), duration, warmup, smoke };
}

export function toMarkdown(rows: Row[]): string {
  const fmt = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? "" : String(n));
  const lines = [
    "| scenario | figure | baseline | ratio | target | pass |",
    "|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.scenario} | ${fmt(r.figure)} ${r.unit} | ${r.baseline !== undefined ? `${fmt(r.baseline)} (${r.baselineLabel ?? ""})` : "—"} | ${fmt(r.ratio) || "—"} | ${r.target} | ${r.pass === null ? "n/a" : r.pass ? "pass" : "**fail**"} |`,
    ),
  ];
  return lines.join("\n");
}

/**
 * Issue 32's targets (bench/lib/targets.ts), one line each, with what this run measured for them: the ratio of the
 * rows that report one, or their figure when they have no ratio. "not measured" when its scenario did not run.
 */
export function targetsTable(rows: Row[]): string {
  const fmt = (r: Row) => {
    const v = r.ratio ?? r.figure;
    return `${Number.isNaN(v) ? "none" : v}${r.ratio === undefined ? ` ${r.unit}` : ""}${r.targetPart ? ` (${r.targetPart})` : ""}`;
  };
  const lines = ["| figure | target | this run | pass |", "|---|---|---|---|"];
  for (const [id, t] of Object.entries(TARGETS) as [TargetId, (typeof TARGETS)[TargetId]][]) {
    const got = rows.filter((r) => r.targetId === id);
    const pass = got.length === 0 ? "n/a" : got.every((r) => r.pass === true) ? "pass" : "**fail**";
    lines.push(`| ${t.label} | ${targetText(id)} | ${got.map(fmt).join(", ") || "not measured"} | ${pass} |`);
  }
  return lines.join("\n");
}

// --smoke: a quick check of the harness itself (used by the test suite): prints, writes no files.
const { names, duration, warmup, smoke } = parseArgs(process.argv.slice(2));
const ctx = await createBenchContext({ durationSeconds: duration, warmupSeconds: warmup });
const rows: Row[] = [];
const started = new Date();
try {
  for (const name of names) {
    console.error(`bench: ${name} ...`);
    // Each scenario starts from a settled database, not in the wake of the previous one's writes.
    await ctx.sql`CHECKPOINT`;
    await Bun.sleep(2000);
    const got = await SCENARIOS[name]!(ctx).catch((err): Row[] => [
      { scenario: name, figure: NaN, unit: "", target: "", pass: false, notes: `failed: ${(err as Error).message}` },
    ]);
    rows.push(...got);
    for (const r of got)
      console.error(
        `bench:   ${r.scenario}: ${r.figure} ${r.unit}${r.ratio !== undefined ? ` (ratio ${r.ratio})` : ""}`,
      );
  }
} finally {
  await ctx.close();
}

const machine = `${cpus().length} cores (${cpus()[0]?.model ?? "unknown CPU"}), Bun ${Bun.version}`;
const table = toMarkdown(rows);
const targets = rows.some((r) => r.targetId) ? `\n\nIssue 32's and 43's targets:\n\n${targetsTable(rows)}` : "";
console.log(`\n${table}${targets}\n`);
if (smoke) process.exit(rows.some((r) => Number.isNaN(r.figure)) ? 1 : 0);
const stamp = started.toISOString().replace(/[:.]/g, "-");
mkdirSync(join(ROOT, "bench", "results"), { recursive: true });
writeFileSync(
  join(ROOT, "bench", "results", `${stamp}.json`),
  JSON.stringify({ startedAt: started.toISOString(), machine, durationSeconds: duration, rows }, null, 2),
);

// docs/benchmarks.md keeps its hand-written analysis; only the block between the markers is replaced.
const docPath = join(ROOT, "docs", "benchmarks.md");
const begin = "<!-- bench:latest:begin -->";
const end = "<!-- bench:latest:end -->";
const block = `${begin}\nLatest run: ${started.toISOString().slice(0, 16).replace("T", " ")} UTC on ${machine}; ${duration} s per measurement after ${warmup} s warm-up; scenarios: ${names.join(", ")}.\n\n${table}${targets}\n\nNotes per row:\n\n${rows.map((r) => `- ${r.scenario}: ${r.notes ?? ""}`).join("\n")}\n${end}`;
const doc = existsSync(docPath) ? readFileSync(docPath, "utf8") : `# Benchmarks\n\n${begin}\n${end}\n`;
writeFileSync(
  docPath,
  doc.includes(begin) ? doc.replace(new RegExp(`${begin}[\\s\\S]*${end}`), block) : `${doc}\n${block}\n`,
);
process.exit(rows.some((r) => r.pass === false) ? 1 : 0);
