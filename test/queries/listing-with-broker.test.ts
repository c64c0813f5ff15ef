// The listing-with-broker read and the "went live" (listedAt) rule are written once (packages/database/src/queries)
// and read by two services: the buyers' pages (API) and the search documents (indexer). Against the real PostgreSQL,
// a listing that went live, was hidden and went live again reads the same in both, and listedAt is the last move
// into a buyer-visible status, not its creation nor a move between visible statuses.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { uniqueName } from "../support/env.ts";
import {
  findVisibleListing,
  visibleListingsOfBroker,
} from "../../services/marketplace/src/buyers/public-repository.ts";
import { sample, startApi, type ApiHarness, type Partner } from "../../services/api/test/support/harness.ts";
import {
  loadListingsByIds,
  loadListingStates,
  loadVisibleListingsOfBrokers,
} from "../../services/indexer/src/indexing/listing-store.ts";

let api: ApiHarness;
let partner: Partner;

beforeAll(async () => {
  api = await startApi({ relay: false });
  partner = await api.createPartner();
});
afterAll(() => api.stop());

test("the API's and the indexer's reads agree on the broker and on when the listing went live", async () => {
  const brokerExternalId = uniqueName("broker");
  const broker = await partner.put(
    `/partner/v1/brokers/${brokerExternalId}`,
    sample.broker({ name: "Agreeing Broker" }),
  );
  expect(broker.status).toBe(201);
  const externalId = uniqueName("listing");
  const put = (status: string) =>
    partner.put(`/partner/v1/listings/${externalId}`, sample.listing(brokerExternalId, { status }));
  const created = await put("FOR_SALE");
  expect(created.status).toBe(201);
  const id: number = created.body.serviceListingId;
  for (const status of ["SOLD", "FOR_SALE", "REVIEWING_OFFERS"]) expect((await put(status)).status).toBe(200);

  // The rule by hand: SOLD → FOR_SALE is the last move into a visible status; FOR_SALE → REVIEWING_OFFERS is not one.
  const [expected] = await api.sql<{ changed_at: Date; created_at: Date }[]>`
    SELECT h.changed_at, l.created_at FROM listing_status_history h JOIN listings l ON l.id = h.listing_id
    WHERE h.listing_id = ${id} AND h.from_status = 'SOLD' AND h.to_status = 'FOR_SALE'`;
  expect(expected).toBeDefined();
  expect(expected!.changed_at.getTime()).toBeGreaterThan(expected!.created_at.getTime());
  const wentLive = expected!.changed_at.toISOString();

  const page = await findVisibleListing(api.sql, String(id));
  const [ofBroker] = await visibleListingsOfBroker(api.sql, broker.body.serviceBrokerId, 10);
  const [indexed] = await loadListingsByIds(api.sql, [id]);
  const [indexedOfBroker] = await loadVisibleListingsOfBrokers(api.sql, [broker.body.serviceBrokerId]);
  const state = (await loadListingStates(api.sql, [id])).get(id);

  expect(page).not.toBeNull();
  expect({ brokerId: page!.broker.id, brokerName: page!.broker.name, listedAt: page!.listedAt.toISOString() }).toEqual({
    brokerId: broker.body.serviceBrokerId,
    brokerName: "Agreeing Broker",
    listedAt: wentLive,
  });
  expect(ofBroker!.listedAt.toISOString()).toBe(wentLive);
  for (const s of [indexed!.state, indexedOfBroker!.state, state!]) {
    expect({ brokerId: s.brokerId, brokerName: s.brokerName, listedAt: s.listedAt }).toEqual({
      brokerId: page!.broker.id,
      brokerName: page!.broker.name,
      listedAt: wentLive,
    });
  }
});
