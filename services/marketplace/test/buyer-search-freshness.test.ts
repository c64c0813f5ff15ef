// Buyers never see more than the record allows now: with the index left behind (the indexer stopped after the
// first indexing, so OpenSearch still holds the old documents), search checks every hit against PostgreSQL.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@opensearch-project/opensearch";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import {
  deleteSearchIndex,
  rawDocument,
  startIndexer,
  until,
  type IndexerHarness,
} from "../../indexer/test/support/indexer-harness.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";

let api: ApiHarness;
let idx: IndexerHarness;
let opensearch: Client;
let partner: Partner;
let brokerExternalId: string;
let serviceBrokerId: string;
const token = Math.random().toString(36).slice(2, 8);
const state = `F${token}`.toUpperCase();
const street = `7 Lagging Index Road ${token}`;
const location = {
  streetAddress1: street,
  city: "Austin",
  state,
  postalCode: "78701",
  country: "US",
  visibility: "SHOW_FULL_ADDRESS",
};

const ids: Record<"sold" | "hidden" | "unchanged", { externalId: string; serviceId: number }> = {} as never;

beforeAll(async () => {
  idx = await startIndexer();
  api = await startApi({ searchAlias: idx.alias });
  opensearch = new Client({ node: testUrls().OPENSEARCH_URL });
  partner = await api.createPartner();
  brokerExternalId = uniqueName("broker");
  serviceBrokerId = (
    await partner.put(`/partner/v1/brokers/${brokerExternalId}`, sample.broker({ name: "Lag Broker" }))
  ).body.serviceBrokerId;
  for (const name of ["sold", "hidden", "unchanged"] as const) {
    const externalId = uniqueName(name);
    const res = await partner.put(
      `/partner/v1/listings/${externalId}`,
      sample.listing(brokerExternalId, { title: `${name} bakery ${token}`, location }),
    );
    expect(res.body).toMatchObject({ status: "success" });
    ids[name] = { externalId, serviceId: res.body.serviceListingId };
  }
  // Indexed as FOR_SALE with the full address...
  for (const { serviceId } of Object.values(ids)) {
    await until(
      `listing ${serviceId} in the index`,
      async () => (await rawDocument(opensearch, idx.alias, serviceId))?.location?.streetAddress1 === street,
    );
  }
  await opensearch.indices.refresh({ index: idx.alias });
  // ...then no indexer runs any more: what follows reaches PostgreSQL only.
  await idx.stop();
  expect((await partner.put(`/partner/v1/listings/${ids.sold.externalId}`, { status: "SOLD" })).status).toBe(200);
  expect(
    (
      await partner.put(`/partner/v1/listings/${ids.hidden.externalId}`, {
        location: { visibility: "SHOW_STATE_ONLY" },
      })
    ).status,
  ).toBe(200);
}, 90_000);

afterAll(async () => {
  await api?.stop();
  await opensearch?.close();
  if (idx) await deleteSearchIndex(idx.alias);
});

const search = (query: string) => call(api.marketplaceUrl, "GET", `/v1/listings?${query}`);
const hit = (res: { body: any }, serviceId: number) =>
  res.body.results.find((r: any) => r.serviceListingId === serviceId);

describe("search while the index lags PostgreSQL", () => {
  test("the index really is stale: it still holds the sold listing and the hidden street address", async () => {
    expect((await rawDocument(opensearch, idx.alias, ids.sold.serviceId))?.status).toBe("FOR_SALE");
    expect((await rawDocument(opensearch, idx.alias, ids.hidden.serviceId))?.location).toMatchObject({
      streetAddress1: street,
      city: "Austin",
      visibility: "SHOW_FULL_ADDRESS",
    });
  });

  test("a listing marked SOLD is no longer returned by search", async () => {
    for (const query of [
      `q=${encodeURIComponent(`bakery ${token}`)}`,
      `state=${state}`,
      `state=${state}&sort=price_desc`,
    ]) {
      const res = await search(query);
      expect(res.status).toBe(200);
      expect(hit(res, ids.sold.serviceId)).toBeUndefined();
      expect(hit(res, ids.unchanged.serviceId)).toBeDefined();
    }
  });

  test("a listing switched to SHOW_STATE_ONLY is returned without its street, postal code or city", async () => {
    const res = await search(`state=${state}`);
    const result = hit(res, ids.hidden.serviceId);
    expect(result.location).toEqual({ state, country: "US", visibility: "SHOW_STATE_ONLY" });
    // The untouched listing still shows its full address (the check redacts by the record, it does not blank everything).
    expect(hit(res, ids.unchanged.serviceId).location).toMatchObject({
      streetAddress1: street,
      city: "Austin",
      postalCode: "78701",
    });
    // The street appears once in the whole answer: the untouched listing's, never the hidden one's.
    expect(JSON.stringify(res.body).split(street).length - 1).toBe(1);
  });

  test("a city filter no longer matches the listing whose city is now hidden", async () => {
    const res = await search(`state=${state}&city=austin`);
    expect(res.status).toBe(200);
    expect(hit(res, ids.hidden.serviceId)).toBeUndefined();
    expect(hit(res, ids.sold.serviceId)).toBeUndefined();
    expect(hit(res, ids.unchanged.serviceId)).toBeDefined();
  });

  test("the JSON views, the listing pages and the broker page agree with search", async () => {
    expect((await call(api.marketplaceUrl, "GET", `/v1/listings/${ids.sold.serviceId}`)).status).toBe(404);
    const hidden = await call(api.marketplaceUrl, "GET", `/v1/listings/${ids.hidden.serviceId}`);
    expect(hidden.status).toBe(200);
    expect(hidden.body.listing.location).toEqual({ state, country: "US", visibility: "SHOW_STATE_ONLY" });

    // Sold: gone from the market, so its page answers 410 (with similar live listings), never its content.
    const soldPage = await call(api.marketplaceUrl, "GET", `/listings/${ids.sold.serviceId}`);
    expect(soldPage.status).toBe(410);
    expect(String(soldPage.body)).not.toContain(`sold bakery ${token}`);
    const hiddenPage = await call(api.marketplaceUrl, "GET", `/listings/${ids.hidden.serviceId}`);
    expect(hiddenPage.status).toBe(200);
    expect(String(hiddenPage.body)).toContain(`hidden bakery ${token}`);
    expect(String(hiddenPage.body)).not.toContain(street);
    expect(String(hiddenPage.body)).not.toContain("78701");

    const brokerPage = await call(api.marketplaceUrl, "GET", `/brokers/${serviceBrokerId}`);
    expect(brokerPage.status).toBe(200);
    expect(String(brokerPage.body)).not.toContain(`sold bakery ${token}`);
    expect(String(brokerPage.body)).toContain(`unchanged bakery ${token}`);
    const brokerJson = await call(api.marketplaceUrl, "GET", `/v1/brokers/${serviceBrokerId}`);
    expect(brokerJson.body.broker.listings.map((l: any) => l.serviceListingId).sort()).toEqual(
      [ids.hidden.serviceId, ids.unchanged.serviceId].sort(),
    );
  });
});
