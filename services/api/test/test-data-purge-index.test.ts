// The test-data purge deletes brokers; each deletion makes PostgreSQL check leads' foreign key with the query
// below (the form ri_triggers.c uses), and the purge's own NOT EXISTS asks the same. Without an index on
// leads(broker_id) both scan every partner's leads per broker (migration 0018, docs/benchmarks.md "Test-data
// purge"). Sequential scans are switched off so the plan shows whether an index can answer at all, whatever the
// (small) test table's statistics would make the planner prefer.
import { afterAll, expect, test } from "bun:test";
import postgres from "postgres";
import { testUrls } from "../../../test/support/env.ts";

const sql = postgres(testUrls().DATABASE_URL, { max: 1, onnotice: () => {} });
afterAll(() => sql.end());

type PlanNode = { "Node Type": string; "Relation Name"?: string; "Index Name"?: string; Plans?: PlanNode[] };
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

async function leadsAccess(query: string): Promise<PlanNode[]> {
  return sql.begin(async (tx) => {
    await tx`SET LOCAL enable_seqscan = off`;
    const [row] = await tx.unsafe(`EXPLAIN (FORMAT JSON) ${query}`);
    const plan = (row as unknown as { "QUERY PLAN": { Plan: PlanNode }[] })["QUERY PLAN"][0]!.Plan;
    return nodes(plan).filter((n) => n["Relation Name"] === "leads" || (n["Index Name"] ?? "").startsWith("leads"));
  });
}

test("the foreign-key check of a broker's deletion finds its leads through an index, not a scan of every lead", async () => {
  const access = await leadsAccess("SELECT 1 FROM ONLY leads x WHERE broker_id = 42 FOR KEY SHARE OF x");
  expect(access.map((n) => n["Node Type"])).not.toContain("Seq Scan");
  expect(access.map((n) => n["Index Name"])).toContain("leads_broker");
});

test("the purge's 'no lead refers to this broker' check uses the same index", async () => {
  const access = await leadsAccess(`
    SELECT b.id FROM brokers b
    WHERE b.mode = 'test' AND b.partner_id = '00000000-0000-0000-0000-000000000000'
      AND NOT EXISTS (SELECT 1 FROM leads d WHERE d.broker_id = b.id)`);
  expect(access.map((n) => n["Node Type"])).not.toContain("Seq Scan");
  expect(access.map((n) => n["Index Name"])).toContain("leads_broker");
});

test("the index is valid (a failed CREATE INDEX CONCURRENTLY would leave it INVALID and unused)", async () => {
  const [row] = await sql<{ indisvalid: boolean; definition: string }[]>`
    SELECT i.indisvalid, pg_get_indexdef(i.indexrelid) AS definition
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    WHERE c.relname = 'leads_broker' AND c.relnamespace = current_schema()::regnamespace`;
  expect(row).toEqual({
    indisvalid: true,
    definition: expect.stringContaining("ON public.leads USING btree (broker_id)"),
  });
});
