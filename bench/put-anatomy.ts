// Diagnostic (issue 43, not a benchmark row): where one single PUT's cost goes, against the fair client's same
// work, measured one request at a time so that nothing else in this database mixes in:
// - statements (= round trips: postgres.js sends each as one pipelined Parse/Bind/Execute/Sync) per PUT, of the
//   API's request and of the relay and feed sequencer per row, against the fair client's;
// - transactions committed per PUT (pg_stat_database.xact_commit of this database), each a WAL flush to wait for;
// - WAL records and bytes per PUT by resource manager and record type (pg_walinspect, the records of this
//   database's relations and of the transactions that wrote them), against the fair client's;
// - the API's time per request split by its spans (tracing at ratio 1 into memory): the request, the
//   transaction, the read, the write, and what is left (HTTP, JSON, validation, merge, hash, diff).
//   N=200 bun bench/put-anatomy.ts        (needs DATABASE_URL etc.; creates pg_walinspect, a superuser's right)
import { readFileSync } from "node:fs";
import type postgres from "postgres";
import { createFeedSequencer, createTracing, silentLogger } from "@pss/service-kit";
import { call, startApi } from "../services/api/test/support/harness.ts";
import { createBenchContext } from "./lib/context.ts";
import { externalId, listingBody } from "./lib/bodies.mjs";
import { createOnce, updateOnce } from "./lib/fair-baseline.ts";

const N = Number(process.env.N ?? 200);
const ctx = await createBenchContext({ durationSeconds: 1, warmupSeconds: 0 });
const sql = ctx.sql;
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
await sql`CREATE EXTENSION IF NOT EXISTS pg_walinspect`;
// A shared cluster's other databases write WAL too, and checkpoints recycle segments: a temporary replication slot
// on a connection of its own keeps every segment from here on until the script ends.
const slotHolder = await sql.reserve();
await slotHolder`SELECT pg_create_physical_replication_slot(${`anatomy_${process.pid}`}, true, true)`;
const [{ oid: dbOid }] =
  (await sql`SELECT oid::text FROM pg_database WHERE datname = current_database()`) as unknown as [{ oid: string }];

/** Statements by who sent them, classified by their first words. */
const statements = new Map<string, number>();
let counting: "api" | "relay" | null = null;
const onQuery = (query: string) => {
  if (!counting) return;
  const kind = query.trim().replace(/\s+/g, " ").slice(0, 60);
  statements.set(`${counting}: ${kind}`, (statements.get(`${counting}: ${kind}`) ?? 0) + 1);
};

async function xacts(): Promise<number> {
  const [row] = await sql`SELECT xact_commit::bigint AS n FROM pg_stat_database WHERE datname = current_database()`;
  return Number(row!.n);
}
const lsn = async () => (await sql`SELECT pg_current_wal_lsn()::text AS l`)[0]!.l as string;

/** WAL records of this database between two LSNs: those on its relations, and every record of their transactions. */
async function walOfThisDatabase(from: string, to: string) {
  const rows = await sql`
    WITH r AS (SELECT * FROM pg_get_wal_records_info(${from}::pg_lsn, ${to}::pg_lsn)),
    mine AS (SELECT DISTINCT xid FROM r WHERE block_ref LIKE ${`%/${dbOid}/%`} AND xid <> 0)
    SELECT resource_manager AS rm, split_part(record_type, ' ', 1) AS type, count(*)::int AS n,
           sum(record_length)::bigint AS bytes, sum(fpi_length)::bigint AS fpi
    FROM r WHERE block_ref LIKE ${`%/${dbOid}/%`} OR xid IN (SELECT xid FROM mine)
    GROUP BY 1, 2 ORDER BY 4 DESC`;
  return rows as unknown as { rm: string; type: string; n: number; bytes: string; fpi: string }[];
}

function printWal(label: string, wal: Awaited<ReturnType<typeof walOfThisDatabase>>, per: number) {
  const total = wal.reduce((s, r) => s + Number(r.bytes), 0);
  const records = wal.reduce((s, r) => s + r.n, 0);
  console.log(
    `  WAL ${label}: ${(total / per).toFixed(0)} B and ${(records / per).toFixed(1)} records per PUT (full-page images ${(wal.reduce((s, r) => s + Number(r.fpi), 0) / per).toFixed(0)} B)`,
  );
  for (const r of wal.slice(0, 14))
    console.log(
      `    ${`${r.rm}/${r.type}`.padEnd(28)} ${(r.n / per).toFixed(2).padStart(6)} records ${(Number(r.bytes) / per).toFixed(0).padStart(6)} B`,
    );
}

async function measure(label: string, work: () => Promise<void>, drain: () => Promise<void>) {
  await sql`CHECKPOINT`;
  statements.clear();
  const x0 = await xacts();
  const from = await lsn();
  const t0 = performance.now();
  await work();
  const ms = performance.now() - t0;
  await drain();
  const x1 = await xacts();
  const to = await lsn();
  console.log(`\n${label} (${N} one at a time, load ${load()}): ${(ms / N).toFixed(2)} ms per PUT`);
  const byWho = new Map<string, number>();
  for (const [k, v] of statements) byWho.set(k.split(":")[0]!, (byWho.get(k.split(":")[0]!) ?? 0) + v);
  console.log(
    `  statements per PUT: ${[...byWho].map(([who, n]) => `${who} ${(n / N).toFixed(2)}`).join(", ")}; transactions committed per PUT ${((x1 - x0) / N).toFixed(2)} (all of this database, the measurement's own ~3 included)`,
  );
  for (const [k, v] of [...statements].sort((a, b) => b[1] - a[1]).slice(0, 12))
    console.log(`    ${(v / N).toFixed(2).padStart(6)}  ${k}`);
  printWal(label, await walOfThisDatabase(from, to), N);
}

// --- the fair client -------------------------------------------------------------------------------------------
const fairClient = (await import("postgres")).default(ctx.urls.DATABASE_URL, {
  max: 2,
  onnotice: () => {},
  debug: (_c: number, q: string) => {
    counting = "api";
    onQuery(q);
    counting = null;
  },
});
const prefix = `anatomy-${Date.now().toString(36)}`;
await measure(
  "fair client, creates",
  async () => {
    for (let i = 0; i < N; i++)
      await createOnce(fairClient as unknown as postgres.Sql, {
        partnerId: ctx.partner.partnerId,
        brokerExternalId: ctx.brokerExternalId,
        key: externalId(`${prefix}-fair`, i),
        body: listingBody(ctx.brokerExternalId, i),
      });
  },
  async () => {},
);
await measure(
  "fair client, updates",
  async () => {
    for (let i = 0; i < N; i++)
      await updateOnce(fairClient as unknown as postgres.Sql, {
        partnerId: ctx.partner.partnerId,
        key: externalId(`${prefix}-fair`, i),
        brokerExternalId: ctx.brokerExternalId,
        mutate: (b) => {
          const financials = b.financials as Record<string, number>;
          financials.askingPrice = (financials.askingPrice ?? 0) + 1000;
        },
      });
  },
  async () => {},
);
await sql`DELETE FROM outbox WHERE topic = 'bench.baseline'`;

// --- the API, its relay and the feed sequencer in this process --------------------------------------------------
const spans: { name: string; kind?: string; duration: number; parentId?: string; id: string }[] = [];
const tracing = createTracing(
  { zipkinUrl: "http://127.0.0.1:9/api/v2/spans", sampleRatio: 1, serviceName: "pss-api" },
  {
    export: {
      intervalMs: 200,
      fetch: async (_url, init) => {
        spans.push(...(JSON.parse(String(init.body)) as typeof spans));
        return new Response(null, { status: 202 });
      },
    },
  },
);
const api = await startApi({
  onQuery: (q) => {
    const before = counting;
    // The relay's and the sequencer's statements are told apart by their tables (they share the client).
    if (
      counting &&
      /FROM outbox|DELETE FROM outbox|feed_drafts d|partner_feed|leader_leases/.test(q.slice(0, 400)) &&
      !/INSERT INTO listings|UPDATE listings/.test(q)
    )
      counting = "relay";
    onQuery(q);
    counting = before;
  },
  tracing,
  // As in production: a sent row is deleted at once.
  outboxRetentionMs: 0,
});
const sequencer = createFeedSequencer({ sql: api.sql, logger: silentLogger }, { retentionDays: 35 });
const drained = async () => {
  for (let i = 0; i < 600; i++) {
    await sequencer.runOnce();
    const [row] = await sql`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`;
    const [drafts] = await sql`SELECT count(*)::int AS n FROM feed_drafts WHERE partner_id = ${ctx.partner.partnerId}`;
    if (row!.n === 0 && drafts!.n === 0) return;
    await Bun.sleep(50);
  }
};
const put = (i: number, asking: number) =>
  call(api.baseUrl, "PUT", `/partner/v1/listings/${externalId(`${prefix}-api`, i)}`, {
    key: ctx.partner.apiKey,
    body: {
      ...listingBody(ctx.brokerExternalId, i),
      financials: { ...listingBody(ctx.brokerExternalId, i).financials, askingPrice: asking },
    },
  });
// Warm: the authenticator's cache, prepared statements.
for (let i = 0; i < 20; i++) await put(100_000 + i, 1);
await drained();

function spanSplit(label: string) {
  const byName = new Map<string, number[]>();
  for (const s of spans) byName.set(s.name, [...(byName.get(s.name) ?? []), s.duration]);
  const mean = (name: string) => {
    const d = byName.get(name) ?? [];
    return d.length ? d.reduce((a, b) => a + b, 0) / d.length / 1000 : 0;
  };
  const request = [...byName.keys()].find((k) => k.startsWith("PUT ")) ?? "PUT";
  const total = mean(request);
  const tx = mean("transaction");
  console.log(
    `  API time per PUT (spans, ${label}): request ${total.toFixed(2)} ms = transaction ${tx.toFixed(2)} ms (read ${mean("listing read").toFixed(2)}, write ${mean("listing write").toFixed(2)}) + outside the database ${(total - tx).toFixed(2)} ms (HTTP, auth, JSON, validation, merge, hash, diff, answer)`,
  );
}

counting = "api";
spans.length = 0;
await measure(
  "API, creates",
  async () => {
    for (let i = 0; i < N; i++) if ((await put(i, 1)).status !== 201) throw new Error("create failed");
  },
  drained,
);
await tracing.flush();
spanSplit("creates");
spans.length = 0;
await measure(
  "API, updates",
  async () => {
    for (let i = 0; i < N; i++) if ((await put(i, 2)).status !== 200) throw new Error("update failed");
  },
  drained,
);
await tracing.flush();
spanSplit("updates");
counting = null;
await api.stop();
await tracing.shutdown();
await fairClient.end();
slotHolder.release();
await ctx.close();
