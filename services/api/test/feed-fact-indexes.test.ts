// Migration 0049: the change feed's lookups by time (webhook replays) and the webhooks' "is this fact still
// waiting" read through partial indexes that hold only facts, so a record change (most of the feed) pays no
// B-tree insertion for them. A partial index is used only when the query's WHERE proves its predicate, so the
// queries repeat it (factsOnly, @pss/database/queries): these tests hold the constant to the migration's indexes
// and show each read path still reaches its index. Sequential scans are off so a plan shows whether an index can
// answer at all, whatever the small test tables' statistics would make the planner prefer.
import { afterAll, expect, test } from "bun:test";
import postgres from "postgres";
import { FEED_RECORD_CHANGE_TYPES, WEBHOOK_EVENT_TYPES } from "@pss/contracts";
import { factsOnly, FEED_FACT_PREDICATE } from "@pss/database/queries";
import { testUrls } from "../../../test/support/env.ts";

const sql = postgres(testUrls().DATABASE_URL, { max: 1, onnotice: () => {} });
afterAll(() => sql.end());

type PlanNode = { "Node Type": string; "Index Name"?: string; Plans?: PlanNode[] };
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

/** The indexes a statement's plan reads, with sequential scans off and its parameters left to a generic plan. */
async function indexesRead(statement: (tx: postgres.TransactionSql) => postgres.PendingQuery<postgres.Row[]>) {
  return sql.begin(async (tx) => {
    await tx`SET LOCAL enable_seqscan = off`;
    await tx`SET LOCAL plan_cache_mode = force_generic_plan`;
    const query = statement(tx);
    const [row] = await tx.unsafe(`EXPLAIN (FORMAT JSON) ${(await query.describe()).string}`, [
      crypto.randomUUID(),
      "live",
      new Date(0).toISOString(),
    ]);
    const plan = (row as unknown as { "QUERY PLAN": { Plan: PlanNode }[] })["QUERY PLAN"][0]!.Plan;
    return nodes(plan).map((n) => n["Index Name"] ?? n["Node Type"]);
  });
}

/** An index's predicate as PostgreSQL prints it. */
async function predicateOf(index: string): Promise<string> {
  const [row] = await sql<
    { p: string }[]
  >`SELECT pg_get_expr(indpred, indrelid) AS p FROM pg_index WHERE indexrelid = ${index}::regclass`;
  return row!.p;
}

test("the facts-only predicate the queries use is the one the migration's indexes were created with", async () => {
  const printed = await sql.begin(async (tx) => {
    await tx`CREATE TEMP TABLE fact_predicate_probe (type text) ON COMMIT DROP`;
    await tx.unsafe(
      `CREATE INDEX fact_predicate_probe_idx ON fact_predicate_probe (type) WHERE ${FEED_FACT_PREDICATE}`,
    );
    const [row] = await tx<{ p: string }[]>`
      SELECT pg_get_expr(indpred, indrelid) AS p FROM pg_index WHERE indexrelid = 'fact_predicate_probe_idx'::regclass`;
    return row!.p;
  });
  expect(await predicateOf("partner_feed_fact_occurred")).toBe(printed);
  expect(await predicateOf("feed_drafts_fact_event")).toBe(printed);
});

test("no webhook event is a record change: every fact a webhook can carry is in the partial indexes", () => {
  expect(FEED_RECORD_CHANGE_TYPES.filter((t) => (WEBHOOK_EVENT_TYPES as readonly string[]).includes(t))).toEqual([]);
  expect(FEED_RECORD_CHANGE_TYPES).toEqual(expect.arrayContaining(["listing.created", "listing.updated"]));
});

test("a replay by time finds the partner's facts since an instant through the facts' time index", async () => {
  const read = await indexesRead(
    (tx) => tx`
      SELECT occurred_at FROM partner_feed
      WHERE partner_id = ${"00000000-0000-0000-0000-000000000000"}::uuid AND mode = ${"live"} AND occurred_at >= ${new Date()}
        AND ${factsOnly(tx)}
      ORDER BY occurred_at LIMIT 1`,
  );
  expect(read).toContain("partner_feed_fact_occurred");
  expect(read).not.toContain("Seq Scan");
});

test("the webhooks' 'is this fact still waiting for its number' finds its draft through the facts' event index", async () => {
  const read = await indexesRead(
    (tx) => tx`
      SELECT EXISTS (SELECT 1 FROM feed_drafts d WHERE d.event_id = ${crypto.randomUUID()}::uuid AND ${factsOnly(tx, "d")}
        AND d.mode = ${"live"} AND d.occurred_at > ${new Date()}) AS waiting`,
  );
  expect(read).toContain("feed_drafts_fact_event");
  expect(read).not.toContain("Seq Scan");
});
