// Concurrent inline-broker PUTs, reassignments between two brokers and broker PUTs, against the real API and
// PostgreSQL. Before: the inline broker was locked FOR UPDATE, which blocked every listing write referencing it
// and deadlocked against reassignments (a deadlock ended as a 500). Now: no 5xx, and a consistent final state.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Topics } from "@pss/contracts";
import { uniqueName } from "../../../test/support/env.ts";
import { sample, startApi, type ApiHarness, type Partner, type TestResponse } from "./support/harness.ts";

let api: ApiHarness;
let partner: Partner;
const LISTINGS = 20;
const ROUNDS = 4;
const brokers = { a: uniqueName("broker-a"), b: uniqueName("broker-b") };
const listingIds = Array.from({ length: LISTINGS }, (_, i) => uniqueName(`contended-${i}`));

beforeAll(async () => {
  api = await startApi({ relay: false });
  partner = await api.createPartner();
  for (const id of Object.values(brokers))
    expect((await partner.put(`/partner/v1/brokers/${id}`, sample.broker({ name: id }))).status).toBe(201);
  for (const id of listingIds)
    expect((await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokers.a))).status).toBe(201);
}, 60_000);
afterAll(() => api?.stop());

const inline = (externalBrokerId: string, round: number) => ({
  externalBrokerId,
  ...sample.broker({ name: `${externalBrokerId} round ${round}` }),
});

describe("concurrent writes to listings and their brokers", () => {
  test(`${LISTINGS} listings × ${ROUNDS} rounds of inline brokers, reassignments and broker updates: no 5xx, consistent state`, async () => {
    const statuses = new Map<number, number>();
    const failures: { request: string; res: TestResponse }[] = [];
    const track = (request: string) => (res: TestResponse) => {
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 300) failures.push({ request, res });
      return res;
    };

    for (let round = 1; round <= ROUNDS; round++) {
      const [mine, other] = round % 2 ? [brokers.a, brokers.b] : [brokers.b, brokers.a];
      const requests: Promise<TestResponse>[] = [];
      listingIds.forEach((id, i) => {
        // Two brokers swapping: half the listings go to one inline, the rest to the other by reference, and
        // every listing gets both kinds of write at once.
        const [viaInline, viaReference] = i % 2 ? [mine, other] : [other, mine];
        requests.push(
          partner
            .put(`/partner/v1/listings/${id}`, { broker: inline(viaInline, round), title: `inline ${round}` })
            .then(track(`inline ${id}`)),
        );
        requests.push(
          partner
            .put(`/partner/v1/listings/${id}`, { brokerExternalId: viaReference, title: `reference ${round}` })
            .then(track(`reference ${id}`)),
        );
      });
      for (const id of [mine, other])
        requests.push(
          partner
            .put(`/partner/v1/brokers/${id}`, sample.broker({ name: `${id} direct ${round}` }))
            .then(track(`broker ${id}`)),
        );
      await Promise.all(requests);
    }

    expect(failures.map((f) => `${f.request}: ${f.res.status} ${JSON.stringify(f.res.body)}`)).toEqual([]);
    expect([...statuses.keys()].filter((s) => s >= 500)).toEqual([]);
    expect(statuses.get(200)).toBe(ROUNDS * (LISTINGS * 2 + 2));

    // Every listing: on one of the two brokers, read-back agrees with the row, and its events tell its history
    // without a gap (one event per version, the last one naming the current broker).
    const brokerRows =
      await api.sql`SELECT id::text AS id, external_id, version FROM brokers WHERE partner_id = ${partner.partnerId}`;
    const brokerIdOf = new Map(brokerRows.map((b) => [b.external_id as string, b.id as string]));
    for (const id of listingIds) {
      const [row] =
        await api.sql`SELECT id::text AS id, broker_id::text AS broker_id, version, title FROM listings WHERE partner_id = ${partner.partnerId} AND external_id = ${id}`;
      expect([brokerIdOf.get(brokers.a), brokerIdOf.get(brokers.b)]).toContain(row!.broker_id);
      const readBack = (await partner.get(`/partner/v1/listings/${id}`)).body.listing;
      expect(readBack.serviceBrokerId).toBe(row!.broker_id);
      expect(readBack.title).toBe(row!.title);
      const events = await api.sql`
        SELECT (payload->>'version')::int AS version, payload->'payload'->>'brokerId' AS broker_id
        FROM outbox WHERE topic = ${Topics.listingEvents.name} AND message_key = ${row!.id} ORDER BY id`;
      expect(events.map((e) => e.version)).toEqual(Array.from({ length: row!.version }, (_, k) => k + 1));
      expect(events.at(-1)!.broker_id).toBe(row!.broker_id);
    }
    for (const b of brokerRows) {
      const events =
        await api.sql`SELECT (payload->>'version')::int AS version FROM outbox WHERE topic = ${Topics.brokerEvents.name} AND message_key = ${b.id} ORDER BY id`;
      expect(events.map((e) => e.version)).toEqual(Array.from({ length: b.version }, (_, k) => k + 1));
    }
  }, 120_000);
});
