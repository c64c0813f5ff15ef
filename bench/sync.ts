// pss-sync throughput: a 10,000-listing feed synced by the CLI against the raw PUT throughput of the same
// feed measured in the same run (bench/lib/raw-puts.ts: the PUTs alone, bodies serialised in advance, same
// concurrency). The CLI is timed as a partner sees it: the whole process, from start to exit (reading and
// validating the feed, hashing, checkpoint, report). Rounds alternate the two; the best of each counts, so a
// neighbour's burst of CPU does not decide. Prints ONE JSON line on stdout.
//   bun bench/sync.ts            (BENCH_SYNC_LISTINGS=10000, BENCH_SYNC_CONCURRENCY=32, BENCH_SYNC_ROUNDS=2)
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Redis from "ioredis";
import postgres from "postgres";
import { migrate } from "@pss/database";
import { up } from "../infra/src/index.ts";
import { createPartnerAdmin } from "../services/api/src/admin/partner-admin.ts";
import { brokerBody, externalId, listingBody } from "./lib/bodies.mjs";
import { ROOT, startApiProcess } from "./lib/processes.ts";

const LISTINGS = Number(process.env.BENCH_SYNC_LISTINGS ?? 10_000);
const CONCURRENCY = Number(process.env.BENCH_SYNC_CONCURRENCY ?? 32);
const ROUNDS = Number(process.env.BENCH_SYNC_ROUNDS ?? 2);
const TARGET = 0.8;
const log = (msg: string) => process.stderr.write(`sync bench: ${msg}\n`);
const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

const urls = await up({ ...process.env, OPENSEARCH_URL: process.env.OPENSEARCH_URL ?? "http://127.0.0.1:9250" });
const sql = postgres(urls.DATABASE_URL, { max: 2, onnotice: () => {} });
await migrate(sql);
const redis = new Redis(urls.REDIS_URL, { lazyConnect: true });
const partner = await createPartnerAdmin({ sql, redis }).createPartner({ name: `bench-sync-${tag}`, leadTracking: false });
const dir = mkdtempSync(join(tmpdir(), "pss-bench-sync-"));

/** A feed of new external IDs: one broker and LISTINGS listings (~3 KB each, 8 photos). */
function writeFeed(name: string, listings = LISTINGS): string {
  const broker = `${tag}-${name}-broker`;
  const lines = [JSON.stringify({ kind: "broker", id: broker, body: brokerBody(0) })];
  for (let i = 0; i < listings; i++) lines.push(JSON.stringify({ kind: "listing", id: externalId(`${tag}-${name}`, i), body: listingBody(broker, i) }));
  const path = join(dir, `${name}.ndjson`);
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

async function runProcess(cmd: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn(cmd, { cwd: ROOT, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${cmd.slice(0, 2).join(" ")} exited ${code}: ${err.slice(-2000)}`);
  return { out, err };
}

const api = await startApiProcess({ ...urls, DATABASE_POOL_SIZE: String(CONCURRENCY) });
const raw: number[] = [];
const synced: number[] = [];
let summary: Record<string, unknown> = {};
try {
  // Warm-up: connections, JIT and plan caches, with a small feed of its own.
  await runProcess([process.execPath, "bench/lib/raw-puts.ts", writeFeed("warm", 2000), api.url, partner.apiKey, String(CONCURRENCY)]);
  for (let round = 0; round < ROUNDS; round++) {
    const rawResult = JSON.parse((await runProcess([process.execPath, "bench/lib/raw-puts.ts", writeFeed(`raw${round}`), api.url, partner.apiKey, String(CONCURRENCY)])).out.trim());
    if (rawResult.non2xx) throw new Error(`raw PUTs: ${rawResult.non2xx} answers were not 2xx`);
    raw.push(rawResult.requests / rawResult.seconds);
    log(`round ${round + 1}: raw PUTs ${Math.round(raw.at(-1)!)} req/s`);

    const feed = writeFeed(`sync${round}`);
    const started = performance.now();
    const { err } = await runProcess(
      [process.execPath, "packages/sdk/src/cli/main.ts", feed, "--rpm", "0", "--concurrency", String(CONCURRENCY), "--progress", "ndjson", "--report", join(dir, `report${round}.ndjson`)],
      { PSS_API_URL: api.url, PSS_API_KEY: partner.apiKey },
    );
    const seconds = (performance.now() - started) / 1000;
    summary = JSON.parse(err.trim().split("\n").at(-1)!);
    if (summary.failed !== 0 || summary.created !== LISTINGS + 1) throw new Error(`pss-sync did not create every record: ${JSON.stringify(summary)}`);
    synced.push((LISTINGS + 1) / seconds);
    log(`round ${round + 1}: pss-sync ${Math.round(synced.at(-1)!)} records/s (whole process, ${seconds.toFixed(1)} s)`);
  }
} finally {
  await api.stop();
  redis.disconnect();
  await sql.end();
  rmSync(dir, { recursive: true, force: true });
}

const best = (xs: number[]) => Math.max(...xs);
const ratio = best(synced) / best(raw);
console.log(
  JSON.stringify({
    scenario: `pss-sync, ${LISTINGS.toLocaleString("en")}-listing feed, ${CONCURRENCY} in flight`,
    figure: Math.round(best(synced)),
    unit: "records/s",
    baseline: Math.round(best(raw)),
    baselineLabel: "raw PUTs of the same feed, same concurrency",
    ratio: Math.round(ratio * 100) / 100,
    target: TARGET,
    pass: ratio >= TARGET,
    notes: `rounds: pss-sync ${synced.map(Math.round).join(", ")} records/s (whole process: read, validate, hash, checkpoint, report); raw ${raw.map(Math.round).join(", ")} req/s; CLI's own PUT phase ${summary.durationMs} ms for ${summary.requests} requests`,
  }),
);
process.exit(0);
