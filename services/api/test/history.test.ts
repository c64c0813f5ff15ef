// Change history against the real API and PostgreSQL: after a sequence of merges, GET .../history shows each
// change exactly (path, old and new value), newest first, with the key and request that made it, status moves,
// long texts cut; pages like the other partner lists; scoped to the partner and the key's mode.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { HISTORY_TEXT_LIMIT } from "@pss/contracts";
import { uniqueName } from "../../../test/support/env.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "./support/harness.ts";

let api: ApiHarness;
let partner: Partner;
let other: Partner;

beforeAll(async () => {
  api = await startApi({ relay: false });
  partner = await api.createPartner({ test: true });
  other = await api.createPartner();
});
afterAll(() => api?.stop());

const put = (p: Partner, path: string, body: unknown, requestId: string, key = p.apiKey) =>
  call(api.baseUrl, "PUT", path, { key, body, headers: { "x-request-id": requestId } });
const history = (path: string, key = partner.apiKey) => call(api.baseUrl, "GET", path, { key });
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("listing history after a sequence of merges", () => {
  const brokerA = uniqueName("broker-a");
  const brokerB = uniqueName("broker-b");
  const id = uniqueName("listing");
  const longText = "Ünïcode 🍕 ".repeat(60); // 600 code points, more UTF-16 units

  beforeAll(async () => {
    expect((await put(partner, `/partner/v1/brokers/${brokerA}`, sample.broker(), "h-broker-a")).status).toBe(201);
    expect(
      (
        await put(
          partner,
          `/partner/v1/brokers/${brokerB}`,
          { name: "Bob Broker", email: "bob@example.com" },
          "h-broker-b",
        )
      ).status,
    ).toBe(201);
    const steps: [unknown, string, number][] = [
      [
        sample.listing(brokerA, {
          status: "DRAFT",
          photos: [{ url: "https://images.example.com/front.jpg", sortKey: 1 }],
        }),
        "h-1",
        201,
      ],
      [{ title: "Taqueria with patio" }, "h-2", 200],
      [{ financials: { askingPrice: 425000 } }, "h-3", 200],
      [{ status: "FOR_SALE" }, "h-4", 200],
      [
        {
          photos: [
            { url: "https://images.example.com/b.jpg", sortKey: 2 },
            { url: "https://images.example.com/a.jpg", sortKey: 1 },
          ],
        },
        "h-5",
        200,
      ],
      [{ title: null, financials: { sde: null }, property: { rentData: { amount: 7000 } } }, "h-6", 200],
      [{ status: "FOR_SALE", financials: { askingPrice: 425000 } }, "h-repeat", 200], // identical: no entry
      [{ brokerExternalId: brokerB, status: "UNDER_CONTRACT" }, "h-7", 200],
      [{ description: longText }, "h-8", 200],
    ];
    for (const [body, requestId, status] of steps)
      expect((await put(partner, `/partner/v1/listings/${id}`, body, requestId)).status).toBe(status);
  });

  test("shows each change exactly, newest first, with time, key, request and status move", async () => {
    const res = await history(`/partner/v1/listings/${id}/history`);
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    const entries = res.body.results;
    expect(entries.map((e: { requestId: string }) => e.requestId)).toEqual([
      "h-8",
      "h-7",
      "h-6",
      "h-5",
      "h-4",
      "h-3",
      "h-2",
      "h-1",
    ]);
    expect(entries.map((e: { version: number }) => e.version)).toEqual([9, 8, 7, 6, 5, 4, 3, 2].map((v) => v - 1));
    for (const e of entries) {
      expect(e.keyId).toBe(partner.keyId);
      expect(e.changedAt).toMatch(ISO);
    }
    const times = entries.map((e: { changedAt: string }) => Date.parse(e.changedAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    const [v8, v7, v6, v5, v4, v3, v2, v1] = entries;
    const cut = `${Array.from(longText).slice(0, HISTORY_TEXT_LIMIT).join("")}…`;
    expect(v8).toMatchObject({
      created: false,
      statusChange: null,
      changes: [
        { path: "description", from: "Established restaurant with loyal customers.", to: cut, truncated: true },
      ],
    });
    expect(v7).toMatchObject({
      statusChange: { from: "FOR_SALE", to: "UNDER_CONTRACT" },
      changes: [
        { path: "brokerExternalId", from: brokerA, to: brokerB },
        { path: "status", from: "FOR_SALE", to: "UNDER_CONTRACT" },
      ],
    });
    expect(v6.changes).toEqual([
      { path: "financials.sde", from: 180000, to: null },
      { path: "property.rentData.amount", from: 6500, to: 7000 },
      { path: "title", from: "Taqueria with patio", to: null },
    ]);
    // A list is one path, stored in sortKey order, whole.
    expect(v5.changes).toEqual([
      {
        path: "photos",
        from: [{ url: "https://images.example.com/front.jpg", sortKey: 1 }],
        to: [
          { url: "https://images.example.com/a.jpg", sortKey: 1 },
          { url: "https://images.example.com/b.jpg", sortKey: 2 },
        ],
      },
    ]);
    expect(v4).toMatchObject({
      statusChange: { from: "DRAFT", to: "FOR_SALE" },
      changes: [{ path: "status", from: "DRAFT", to: "FOR_SALE" }],
    });
    expect(v3.changes).toEqual([{ path: "financials.askingPrice", from: 450000, to: 425000 }]);
    expect(v2).toMatchObject({
      statusChange: null,
      changes: [{ path: "title", from: "Profitable taqueria downtown", to: "Taqueria with patio" }],
    });
    // Creation: every field set, from nothing.
    expect(v1.created).toBe(true);
    expect(v1.statusChange).toEqual({ from: null, to: "DRAFT" });
    expect(v1.changes).toContainEqual({ path: "brokerExternalId", from: null, to: brokerA });
    expect(v1.changes).toContainEqual({ path: "location.city", from: null, to: "Austin" });
    expect(v1.changes).toContainEqual({ path: "financials.askingPrice", from: null, to: 450000 });
    expect(v1.changes.every((c: { from: unknown }) => c.from === null)).toBe(true);
    expect(v1.changes.map((c: { path: string }) => c.path)).toEqual(
      [...v1.changes.map((c: { path: string }) => c.path)].sort(),
    );

    // The read-back agrees with where the history ends.
    const now = (await partner.get(`/partner/v1/listings/${id}`)).body.listing;
    expect(now).toMatchObject({
      status: "UNDER_CONTRACT",
      brokerExternalId: brokerB,
      title: null,
      description: longText,
      financials: { askingPrice: 425000, revenue: 900000 },
    });
    expect(now.statusHistory.map((s: { to: string }) => s.to)).toEqual(["DRAFT", "FOR_SALE", "UNDER_CONTRACT"]);
  });

  test("pages newest first with limit and nextCursor, every entry once", async () => {
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await history(`/partner/v1/listings/${id}/history?limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      expect(res.body.results.length).toBeLessThanOrEqual(3);
      seen.push(...res.body.results.map((e: { version: number }) => e.version));
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
  });

  test("bad paging parameters are 400 in the list endpoints' words", async () => {
    expect((await history(`/partner/v1/listings/${id}/history?limit=0`)).body).toMatchObject({
      status: "error",
      error: expect.stringContaining("limit"),
    });
    expect((await history(`/partner/v1/listings/${id}/history?cursor=abc`)).body).toEqual({
      status: "error",
      error: "cursor is not valid; pass nextCursor from the previous page unchanged",
    });
    expect((await history(`/partner/v1/listings/${id}/history?updatedSince=2024-01-01T00:00:00Z`)).status).toBe(400);
  });

  test("is found only by its partner and mode: another partner, or the partner's test key, gets 404", async () => {
    expect(await history(`/partner/v1/listings/${id}/history`, other.apiKey)).toMatchObject({
      status: 404,
      body: { status: "error", error: "Listing not found" },
    });
    expect(await history(`/partner/v1/listings/${id}/history`, partner.test!.apiKey)).toMatchObject({
      status: 404,
      body: { error: "Listing not found" },
    });
    expect((await history(`/partner/v1/listings/${uniqueName("nothing")}/history`)).status).toBe(404);
  });
});

describe("broker history", () => {
  test("records broker PUTs and inline-broker changes made by listing PUTs, each with its request", async () => {
    const brokerId = uniqueName("broker");
    expect((await put(partner, `/partner/v1/brokers/${brokerId}`, sample.broker(), "b-1")).status).toBe(201);
    expect(
      (
        await put(
          partner,
          `/partner/v1/brokers/${brokerId}`,
          sample.broker({ serviceAreas: [{ state: "TX", country: "US" }], profile: { website: null } }),
          "b-2",
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await put(
          partner,
          `/partner/v1/brokers/${brokerId}`,
          sample.broker({ serviceAreas: [{ state: "TX", country: "US" }], profile: { website: null } }),
          "b-repeat",
        )
      ).status,
    ).toBe(200);
    const inline = {
      externalBrokerId: brokerId,
      ...sample.broker({
        serviceAreas: [{ state: "TX", country: "US" }],
        profile: { bio: "Twenty years selling Texas businesses." },
        phone: "+1 512 555 0188",
      }),
    };
    expect(
      (
        await put(
          partner,
          `/partner/v1/listings/${uniqueName("listing")}`,
          { ...sample.listing(brokerId), brokerExternalId: undefined, broker: inline },
          "b-3",
        )
      ).status,
    ).toBe(201);

    const res = await history(`/partner/v1/brokers/${brokerId}/history`);
    expect(res.status).toBe(200);
    const [v3, v2, v1] = res.body.results;
    expect(res.body.results).toHaveLength(3);
    expect(v3).toEqual({
      version: 3,
      changedAt: expect.stringMatching(ISO),
      keyId: partner.keyId,
      requestId: "b-3",
      created: false,
      changes: [{ path: "phone", from: "+1 512 555 0100", to: "+1 512 555 0188" }],
    });
    expect(v2.changes).toEqual([
      { path: "profile.website", from: "https://jane.example.com", to: null },
      {
        path: "serviceAreas",
        from: [{ city: "Austin", state: "TX", country: "US" }],
        to: [{ state: "TX", country: "US" }],
      },
    ]);
    expect(v1).toMatchObject({ version: 1, created: true, requestId: "b-1" });
    expect(v1.changes).toContainEqual({ path: "email", from: null, to: "jane.broker@example.com" });
    expect("statusChange" in v1).toBe(false);
  });

  test("a test-mode broker with the same external ID has a history of its own", async () => {
    const brokerId = uniqueName("broker");
    expect((await put(partner, `/partner/v1/brokers/${brokerId}`, sample.broker(), "live-1")).status).toBe(201);
    expect(
      (
        await put(
          partner,
          `/partner/v1/brokers/${brokerId}`,
          sample.broker({ name: "Test Jane" }),
          "test-1",
          partner.test!.apiKey,
        )
      ).status,
    ).toBe(201);
    const live = await history(`/partner/v1/brokers/${brokerId}/history`);
    const testMode = await history(`/partner/v1/brokers/${brokerId}/history`, partner.test!.apiKey);
    expect(live.body.results.map((e: { requestId: string }) => e.requestId)).toEqual(["live-1"]);
    expect(testMode.body.results.map((e: { requestId: string; keyId: string }) => [e.requestId, e.keyId])).toEqual([
      ["test-1", partner.test!.keyId],
    ]);
    expect(testMode.body.results[0].changes).toContainEqual({ path: "name", from: null, to: "Test Jane" });
  });
});
