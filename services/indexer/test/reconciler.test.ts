// The reconciler against the real PostgreSQL and OpenSearch: listings whose events were lost are indexed again,
// the repairs are counted, and of two reconcilers only one works.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Client } from "@opensearch-project/opensearch";
import { createMetrics, silentLogger } from "@pss/service-kit";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import { parsePrometheusText, valueOf } from "../../../test/support/prometheus-text.ts";
import { sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { createReconciler, createReconcilerMetrics, type Reconciler } from "../src/reconcile/reconciler.ts";
import { createDeterministicRewriter } from "../src/rewriting/description-rewriter.ts";
import { createIndexEnsurer } from "../src/search-index/ensure-index.ts";

const alias = uniqueName("reconcile-listings");
const opensearch = new Client({ node: testUrls().OPENSEARCH_URL });
let api: ApiHarness;
let partner: Partner;
const reconcilers: Reconciler[] = [];

beforeAll(async () => {
  // No relay: nothing these tests write reaches Kafka, as if every event were lost.
  api = await startApi({ relay: false });
  partner = await api.createPartner({ test: true });
  await createIndexEnsurer(opensearch, alias, silentLogger)();
});
afterAll(async () => {
  await Promise.all(reconcilers.map((r) => r.stop()));
  await opensearch.indices.delete({ index: `${alias}-v*` }).catch(() => {});
  await api.stop();
});

function reconcilerWithMetrics() {
  const metrics = createMetrics({ service: "indexer", defaultMetrics: false });
  const reconciler = createReconciler({
    sql: api.sql,
    opensearch,
    alias,
    rewriter: createDeterministicRewriter(),
    logger: silentLogger,
    pendingAfterMs: 60_000,
    intervalMs: 0,
    metrics: createReconcilerMetrics(metrics),
    partnerIds: [partner.partnerId],
  });
  reconcilers.push(reconciler);
  return { reconciler, scrape: async () => parsePrometheusText(await metrics.render()) };
}

async function listing(brokerId: string, overrides: Record<string, unknown> = {}): Promise<number> {
  const { status, body } = await partner.put(
    `/partner/v1/listings/${uniqueName("listing")}`,
    sample.listing(brokerId, { photos: [], ...overrides }),
  );
  expect(status).toBe(201);
  return body.serviceListingId;
}

const indexState = async (id: number) =>
  (await api.sql`SELECT index_state, indexed_version, version FROM listings WHERE id = ${id}`)[0];
const documentOf = async (id: number) => {
  const res = await opensearch.get({ index: alias, id: String(id) }, { ignore: [404] });
  return res.body as { found: boolean; _version?: number; _source?: { title?: string } };
};

test("listings whose events were lost are indexed again once overdue; of two reconcilers only one works", async () => {
  const brokerId = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
  const visible = await listing(brokerId, { title: "Lost on its way" });
  const hidden = await listing(brokerId, { status: "DRAFT" });
  const fresh = await listing(brokerId);
  // The relay "published" the first two (Kafka never kept them) long ago; the third was written just now.
  await api.sql`UPDATE outbox SET published_at = now() WHERE published_at IS NULL`;
  await api.sql`UPDATE listings SET updated_at = now() - interval '10 minutes' WHERE id IN (${visible}, ${hidden})`;

  const a = reconcilerWithMetrics();
  const b = reconcilerWithMetrics();
  const [ra, rb] = await Promise.all([a.reconciler.runOnce(), b.reconciler.runOnce()]);
  // Exactly one took the lock and worked; the other stood by.
  expect([ra, rb].filter((r) => r === null)).toHaveLength(1);
  const [active, standby] = ra ? [a, b] : [b, a];
  expect((ra ?? rb)!.repaired.pending_timeout).toBe(2);
  expect(active.reconciler.isActive()).toBe(true);
  expect(standby.reconciler.isActive()).toBe(false);

  expect(await indexState(visible)).toEqual({ index_state: "indexed", indexed_version: 1, version: 1 });
  expect(await indexState(hidden)).toEqual({ index_state: "removed", indexed_version: 1, version: 1 });
  expect(await indexState(fresh)).toEqual({ index_state: "pending", indexed_version: null, version: 1 });
  const doc = await documentOf(visible);
  expect([doc.found, doc._version, doc._source?.title]).toEqual([true, 1, "Lost on its way"]);

  const activeSamples = await active.scrape();
  expect(valueOf(activeSamples, "indexer_reconciler_repairs_total", { reason: "pending_timeout" })).toBe(2);
  expect(valueOf(activeSamples, "indexer_reconciler_active")).toBe(1);
  const standbySamples = await standby.scrape();
  expect(valueOf(standbySamples, "indexer_reconciler_repairs_total")).toBe(0);
  expect(valueOf(standbySamples, "indexer_reconciler_active")).toBe(0);

  // A second run finds nothing left to do: repairs are not repeated.
  expect((await active.reconciler.runOnce())!.repaired).toEqual({
    pending_timeout: 0,
    version_mismatch: 0,
    missing_document: 0,
    stale_document: 0,
  });

  // A document lost from the index behind the indexer's back (here deleted at its own version, as a restored or
  // hand-edited index would lose it) is found by the audit and written again.
  await opensearch.delete({
    index: alias,
    id: String(visible),
    version: 1,
    version_type: "external_gte",
    refresh: true,
  } as never);
  expect((await active.reconciler.runOnce())!.repaired.missing_document).toBe(1);
  expect((await documentOf(visible)).found).toBe(true);
  expect(valueOf(await active.scrape(), "indexer_reconciler_repairs_total", { reason: "missing_document" })).toBe(1);

  // The active one stops: the other takes over.
  await active.reconciler.stop();
  expect(await standby.reconciler.runOnce()).not.toBeNull();
  expect(standby.reconciler.isActive()).toBe(true);
}, 90_000);

test("a test listing whose event was lost gets the index state a live one would, and never a document", async () => {
  const brokerId = uniqueName("broker");
  expect((await partner.test!.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
  const put = async (overrides: Record<string, unknown>) => {
    const { status, body } = await partner.test!.put(
      `/partner/v1/listings/${uniqueName("listing")}`,
      sample.listing(brokerId, { photos: [], ...overrides }),
    );
    expect(status).toBe(201);
    return body.serviceListingId as number;
  };
  const forSale = await put({ title: "Test listing, lost event" });
  const draft = await put({ status: "DRAFT" });
  await api.sql`UPDATE outbox SET published_at = now() WHERE published_at IS NULL`;
  await api.sql`UPDATE listings SET updated_at = now() - interval '10 minutes' WHERE id IN (${forSale}, ${draft})`;

  // Earlier tests' reconcilers let go of the lock (one per alias): this one becomes the active one.
  await Promise.all(reconcilers.map((r) => r.stop()));
  const { reconciler } = reconcilerWithMetrics();
  const result = (await reconciler.runOnce())!;
  expect(result.repaired.pending_timeout).toBeGreaterThanOrEqual(2);
  expect(await indexState(forSale)).toEqual({ index_state: "indexed", indexed_version: 1, version: 1 });
  expect(await indexState(draft)).toEqual({ index_state: "removed", indexed_version: 1, version: 1 });
  expect((await documentOf(forSale)).found).toBe(false);
  // The audit does not take "indexed without a document" for a lost document: nothing to repair, nothing written.
  expect((await reconciler.runOnce())!.repaired).toEqual({
    pending_timeout: 0,
    version_mismatch: 0,
    missing_document: 0,
    stale_document: 0,
  });
  expect((await documentOf(forSale)).found).toBe(false);
  await reconciler.stop();
}, 60_000);
