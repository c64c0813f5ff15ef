// `reindex` as the runbook (docs/operations.md, "Reindex") has an operator run it, while buyers search: a
// bounded number of concurrent searches through the API's public search endpoint for the whole run, none may
// fail or see a partial index; afterwards the alias points at the new versioned index, the old one is gone,
// and the new index holds exactly the listings PostgreSQL says are buyer-visible, at their versions.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Client } from "@opensearch-project/opensearch";
import { testUrls, uniqueName } from "../../../../test/support/env.ts";
import {
  deleteSearchIndex,
  indexedState,
  newAlias,
  startIndexer,
  type IndexerHarness,
} from "../../../indexer/test/support/indexer-harness.ts";
import { listingVisibleToBuyers } from "../../src/buyers/buyer-visibility.ts";
import { admin, adminEnv, json } from "../../../api/test/support/admin-cli.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "../../../api/test/support/harness.ts";

const alias = newAlias();
const token = Math.random().toString(36).slice(2, 8);
const kind = `Reindexed bakery ${token}`;
const SEARCHERS = 3;

let api: ApiHarness;
let indexer: IndexerHarness | undefined;
let partner: Partner;
const opensearch = new Client({ node: testUrls().OPENSEARCH_URL });

beforeAll(async () => {
  api = await startApi({ searchAlias: alias });
  partner = await api.createPartner();
});
afterAll(async () => {
  await indexer?.stop();
  await api?.stop();
  await deleteSearchIndex(alias);
  await opensearch.close();
});

async function aliasTargets(): Promise<string[]> {
  const res = await opensearch.indices.getAlias({ name: alias });
  return Object.keys(res.body as Record<string, unknown>);
}

/** Every document of an index: id -> external version (the listing's version). */
async function documents(index: string): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  let res = await opensearch.search({
    index,
    scroll: "30s",
    size: 1000,
    version: true,
    body: { query: { match_all: {} }, _source: false },
  } as never);
  for (;;) {
    const body = res.body as unknown as { _scroll_id: string; hits: { hits: { _id: string; _version: number }[] } };
    if (body.hits.hits.length === 0) {
      await opensearch.clearScroll({ scroll_id: body._scroll_id } as never).catch(() => {});
      return out;
    }
    for (const hit of body.hits.hits) out.set(Number(hit._id), hit._version);
    res = await opensearch.scroll({ scroll_id: body._scroll_id, scroll: "30s" } as never);
  }
}

test("reindex under concurrent buyer searches: no search fails, the alias moves to a new index that matches PostgreSQL, the old index is dropped", async () => {
  // The index the indexer built and serves from; buyers search it through the API.
  // Only this partner's events: another run's (or lane's) event can carry one of these listings' numbers.
  indexer = await startIndexer({ alias, onlyPartners: new Set([partner.partnerId]) });
  const brokerId = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
  const ids: number[] = [];
  for (let i = 0; i < 12; i++) {
    const res = await partner.put(
      `/partner/v1/listings/${uniqueName("listing")}`,
      sample.listing(brokerId, { businessType: kind, title: `Bakery number ${i}` }),
    );
    expect(res.status).toBe(201);
    ids.push(res.body.serviceListingId);
  }
  // One at version 2, one hidden: the new index must show versions and visibility as PostgreSQL holds them.
  const externalIds = (await api.sql`SELECT id, external_id FROM listings WHERE id = ANY(${ids})`).reduce(
    (m, r) => m.set(Number(r.id), r.external_id),
    new Map<number, string>(),
  );
  expect(
    (await partner.put(`/partner/v1/listings/${externalIds.get(ids[0]!)}`, { title: "Bakery number 0, renamed" }))
      .status,
  ).toBe(200);
  expect((await partner.put(`/partner/v1/listings/${externalIds.get(ids[1]!)}`, { status: "SOLD" })).status).toBe(200);
  for (const id of ids) await indexedState(api.sql, id, 30_000);
  await indexer.stop();
  indexer = undefined;
  const visible = ids.length - 1;
  const [old] = await aliasTargets();
  expect(old).toBe(`${alias}-v1`);

  // Buyers keep searching while the reindex runs; every answer must be a full one.
  let running = true;
  const answers: { status: number; total: number | null }[] = [];
  const searcher = async () => {
    while (running) {
      const res = await call(
        api.marketplaceUrl,
        "GET",
        `/v1/listings?businessType=${encodeURIComponent(kind)}&limit=50`,
      );
      answers.push({ status: res.status, total: res.status === 200 ? res.body.total : null });
    }
  };
  const searchers = Array.from({ length: SEARCHERS }, searcher);
  const run = admin(["reindex"], adminEnv({ OPENSEARCH_INDEX_ALIAS: alias }));
  let result: Record<string, any>;
  try {
    result = json(await run, "reindex");
  } finally {
    running = false;
    await Promise.all(searchers);
  }

  expect(answers.length).toBeGreaterThan(SEARCHERS);
  expect(answers.filter((a) => a.status !== 200 || a.total !== visible)).toEqual([]);

  // The alias points at the new versioned index only; the old one is gone.
  expect(result.alias).toBe(alias);
  expect(result.previous).toEqual([old]);
  expect(result.index).toStartWith(`${alias}-v1-`);
  expect(result.rejected).toEqual([]);
  expect(await aliasTargets()).toEqual([result.index]);
  expect((await opensearch.indices.exists({ index: old! })).body).toBe(false);

  // Exactly what the buyer-visibility rule selects in PostgreSQL (test-mode records never), at the versions it
  // holds (the whole database: reindex takes all).
  const expected = new Map(
    (await api.sql`SELECT id, version FROM listings l WHERE ${listingVisibleToBuyers(api.sql)}`).map(
      (r) => [Number(r.id), r.version as number] as const,
    ),
  );
  expect(result.documents).toBeGreaterThanOrEqual(visible);
  const actual = await documents(result.index);
  expect([...actual].sort((a, b) => a[0] - b[0])).toEqual([...expected].sort((a, b) => a[0] - b[0]));
  expect(actual.get(ids[0]!)).toBe(2);
  expect(actual.has(ids[1]!)).toBe(false);
}, 180_000);
