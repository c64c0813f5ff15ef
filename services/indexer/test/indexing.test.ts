import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Topics } from "@pss/contracts";
import { NO_TRACE, silentLogger } from "@pss/service-kit";
import { Partitioners } from "kafkajs";
import { uniqueName } from "../../../test/support/env.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import {
  deleteSearchIndex,
  indexedState,
  rawDocument,
  startIndexer,
  until,
  type IndexerHarness,
} from "./support/indexer-harness.ts";

let api: ApiHarness;
let idx: IndexerHarness;
let partner: Partner;
let brokerId: string;

beforeAll(async () => {
  idx = await startIndexer();
  api = await startApi({ searchAlias: idx.alias });
  partner = await api.createPartner();
  brokerId = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
}, 60_000);
afterAll(async () => {
  await idx?.stop();
  await api?.stop();
  await deleteSearchIndex(idx.alias);
});

async function putListing(externalId: string, body: unknown): Promise<number> {
  const res = await partner.put(`/partner/v1/listings/${externalId}`, body);
  expect([200, 201]).toContain(res.status);
  return res.body.serviceListingId;
}

/** Search through the public API after a refresh, so "absent" is a real observation. */
async function inSearch(id: number, q?: string): Promise<boolean> {
  await idx.opensearch.indices.refresh({ index: idx.alias });
  const res = await call(api.marketplaceUrl, "GET", `/v1/listings?limit=50${q ? `&q=${encodeURIComponent(q)}` : ""}`);
  expect(res.status).toBe(200);
  return res.body.results.some((r: any) => r.serviceListingId === id);
}

describe("the search index follows the spec's status table", () => {
  test("the index lives behind the alias in a versioned index with explicit mappings", async () => {
    const res = await idx.opensearch.indices.getAlias({ name: idx.alias });
    expect(Object.keys(res.body)).toEqual([`${idx.alias}-v1`]);
    const mapping = (await idx.opensearch.indices.getMapping({ index: `${idx.alias}-v1` })).body[`${idx.alias}-v1`]!
      .mappings as any;
    expect(mapping.dynamic).toBe("false");
    expect(mapping.properties.title).toEqual({ type: "text", analyzer: "english" });
    expect(mapping.properties.description).toEqual({ type: "text", analyzer: "english" });
    expect(mapping.properties.status.type).toBe("keyword");
    expect(mapping.properties.businessType.type).toBe("keyword");
    expect(mapping.properties.location.properties.state.type).toBe("keyword");
    expect(mapping.properties.financials.properties.askingPrice.type).toBe("double");
    expect(mapping.properties.listedAt.type).toBe("date");
  });

  test("every commonly listed transition puts the listing in or out of search", async () => {
    const externalId = uniqueName("listing");
    const word = `zq${Math.random().toString(36).slice(2, 9)}`;
    const id = await putListing(externalId, sample.listing(brokerId, { status: "DRAFT", title: `Bakery ${word}` }));
    expect(await indexedState(api.sql, id)).toMatchObject({ state: "removed" });
    expect(await inSearch(id, word)).toBe(false);

    const steps: [string, boolean][] = [
      ["FOR_SALE", true], // DRAFT → FOR_SALE: goes live
      ["REVIEWING_OFFERS", true],
      ["PENDING_CONTRACT", true],
      ["UNDER_CONTRACT", true], // badge shown, still in search
      ["SOLD", false], // removed from search
      ["FOR_SALE", true], // back on the market (from SOLD here; any move is allowed)
      ["REVIEWING_OFFERS", true],
      ["FOR_SALE", true], // deal fell through
      ["PENDING_CONTRACT", true],
      ["FOR_SALE", true], // deal fell through
      ["UNDER_CONTRACT", true],
      ["FOR_SALE", true], // deal fell through
      ["ARCHIVED", false], // hidden, data kept
      ["FOR_SALE", true], // back on market
    ];
    for (const [status, visible] of steps) {
      await putListing(externalId, { status });
      const state = await indexedState(api.sql, id);
      expect({ status, state: state.state }).toEqual({ status, state: visible ? "indexed" : "removed" });
      expect({ status, inSearch: await inSearch(id, word) }).toEqual({ status, inSearch: visible });
      const doc = await rawDocument(idx.opensearch, idx.alias, id);
      if (visible) expect(doc).toMatchObject({ status, underContract: status === "UNDER_CONTRACT" });
      else expect(doc).toBeNull();
    }
    const readBack = await partner.get(`/partner/v1/listings/${externalId}`);
    expect(readBack.body.listing.searchIndex).toEqual({ state: "indexed" });
  }, 60_000);

  test("a listing created straight into a visible status is indexed; DRAFT, SOLD and ARCHIVED creations are not", async () => {
    for (const [status, visible] of [
      ["UNDER_CONTRACT", true],
      ["PENDING_CONTRACT", true],
      ["DRAFT", false],
      ["SOLD", false],
      ["ARCHIVED", false],
    ] as const) {
      const id = await putListing(uniqueName("listing"), sample.listing(brokerId, { status }));
      expect({ status, state: (await indexedState(api.sql, id)).state }).toEqual({
        status,
        state: visible ? "indexed" : "removed",
      });
      expect({ status, present: (await rawDocument(idx.opensearch, idx.alias, id)) !== null }).toEqual({
        status,
        present: visible,
      });
    }
  }, 60_000);
});

describe("only what a buyer may see reaches OpenSearch", () => {
  const address = {
    streetAddress1: "77 Hidden Lane",
    city: "Secretville",
    state: "TX",
    postalCode: "78799",
    country: "US",
  };

  test("SHOW_FULL_ADDRESS indexes the whole address", async () => {
    const id = await putListing(
      uniqueName("listing"),
      sample.listing(brokerId, { location: { ...address, visibility: "SHOW_FULL_ADDRESS" } }),
    );
    await indexedState(api.sql, id);
    expect((await rawDocument(idx.opensearch, idx.alias, id))!.location).toEqual({
      ...address,
      visibility: "SHOW_FULL_ADDRESS",
    });
  });

  test("SHOW_CITY_STATE drops street and postal code", async () => {
    const id = await putListing(
      uniqueName("listing"),
      sample.listing(brokerId, { location: { ...address, visibility: "SHOW_CITY_STATE" } }),
    );
    await indexedState(api.sql, id);
    const doc = (await rawDocument(idx.opensearch, idx.alias, id))!;
    expect(doc.location).toEqual({ city: "Secretville", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" });
    expect(JSON.stringify(doc)).not.toMatch(/Hidden Lane|78799/);
  });

  test("SHOW_STATE_ONLY also drops the city", async () => {
    const id = await putListing(
      uniqueName("listing"),
      sample.listing(brokerId, { location: { ...address, visibility: "SHOW_STATE_ONLY" } }),
    );
    await indexedState(api.sql, id);
    const doc = (await rawDocument(idx.opensearch, idx.alias, id))!;
    expect(doc.location).toEqual({ state: "TX", country: "US", visibility: "SHOW_STATE_ONLY" });
    expect(JSON.stringify(doc)).not.toMatch(/Hidden Lane|78799|Secretville/);
  });

  test("narrowing the visibility later removes the hidden parts from the stored document", async () => {
    const externalId = uniqueName("listing");
    const id = await putListing(
      externalId,
      sample.listing(brokerId, { location: { ...address, visibility: "SHOW_FULL_ADDRESS" } }),
    );
    await indexedState(api.sql, id);
    await putListing(externalId, { location: { visibility: "SHOW_STATE_ONLY" } });
    await indexedState(api.sql, id);
    expect(JSON.stringify(await rawDocument(idx.opensearch, idx.alias, id))).not.toMatch(
      /Hidden Lane|78799|Secretville/,
    );
  });

  test("broker e-mail addresses and phone numbers are never indexed; the broker's name is", async () => {
    const id = await putListing(uniqueName("listing"), sample.listing(brokerId));
    await indexedState(api.sql, id);
    const doc = (await rawDocument(idx.opensearch, idx.alias, id))!;
    expect(doc.broker).toEqual({ serviceBrokerId: expect.any(String), name: "Jane Broker" });
    expect(JSON.stringify(doc)).not.toMatch(/jane\.broker@example\.com|leads@crm\.example\.com|555 0100/);
  });
});

describe("broker changes", () => {
  test("renaming a broker re-indexes that broker's visible listings with the new name", async () => {
    const broker = uniqueName("broker");
    await partner.put(`/partner/v1/brokers/${broker}`, sample.broker({ name: "Old Name" }));
    const visibleId = await putListing(uniqueName("listing"), sample.listing(broker));
    const draftId = await putListing(uniqueName("listing"), sample.listing(broker, { status: "DRAFT" }));
    await indexedState(api.sql, visibleId);
    await indexedState(api.sql, draftId);
    expect((await rawDocument(idx.opensearch, idx.alias, visibleId))!.broker.name).toBe("Old Name");

    await partner.put(`/partner/v1/brokers/${broker}`, sample.broker({ name: "New Name" }));
    await until(
      "the new broker name in the index",
      async () => (await rawDocument(idx.opensearch, idx.alias, visibleId))?.broker.name === "New Name",
    );
    expect(await rawDocument(idx.opensearch, idx.alias, draftId)).toBeNull();
  });
});

describe("ordering and duplicates", () => {
  test("an old event published again to the topic does not bring back an older state", async () => {
    const externalId = uniqueName("listing");
    const id = await putListing(externalId, sample.listing(brokerId, { title: "Version one title" }));
    await indexedState(api.sql, id);
    const [v1] = await api.sql`SELECT payload FROM outbox WHERE message_key = ${String(id)} ORDER BY id LIMIT 1`;
    await putListing(externalId, { title: "Version two title", status: "SOLD" });
    await putListing(externalId, { status: "FOR_SALE" });
    expect(await indexedState(api.sql, id)).toMatchObject({ state: "indexed", version: 3 });

    // Redeliver version 1 (stale) and version 3 (duplicate), then a marker event to know they were consumed.
    const producer = idx.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    const [v3] = await api.sql`SELECT payload FROM outbox WHERE message_key = ${String(id)} ORDER BY id DESC LIMIT 1`;
    await producer.send({
      topic: Topics.listingEvents.name,
      messages: [v1!.payload, v3!.payload].map((p) => ({ key: String(id), value: JSON.stringify(p) })),
    });
    await producer.disconnect();
    await putListing(externalId, { title: "Version four title" });
    await until(
      "version 4 in the index",
      async () => (await rawDocument(idx.opensearch, idx.alias, id))?.title === "Version four title",
    );

    const doc = await idx.opensearch.get({ index: idx.alias, id: String(id) });
    expect(doc.body._version).toBe(4);
    expect((await indexedState(api.sql, id)).version).toBe(4);
  });

  test("the handler called with an older version leaves the newer document and state alone", async () => {
    const externalId = uniqueName("listing");
    const id = await putListing(externalId, sample.listing(brokerId, { title: "Current title" }));
    await putListing(externalId, { status: "SOLD" });
    await putListing(externalId, { status: "FOR_SALE", title: "Newest title" });
    await indexedState(api.sql, id);
    const events = (await api.sql`SELECT payload FROM outbox WHERE message_key = ${String(id)} ORDER BY id`).map(
      (r) => r.payload,
    );
    expect(events.map((e: any) => e.version)).toEqual([1, 2, 3]);

    const ctx = { topic: Topics.listingEvents.name, partition: 0, offset: "0", trace: NO_TRACE, log: silentLogger };
    const failures = await idx.indexer.handleBatch([
      { event: events[0], ctx },
      { event: events[1], ctx },
    ]);
    expect(failures).toEqual([]);
    const doc = await idx.opensearch.get({ index: idx.alias, id: String(id) });
    expect(doc.body._version).toBe(3);
    expect((doc.body._source as any).title).toBe("Newest title");
    expect(await indexedState(api.sql, id)).toEqual({ state: "indexed", version: 3 });
  });

  test("OpenSearch itself refuses an older external version, for index and delete alike", async () => {
    const externalId = uniqueName("listing");
    const id = await putListing(externalId, sample.listing(brokerId));
    await indexedState(api.sql, id);
    const { writeBulk } = await import("../src/search-index/bulk-writer.ts");
    const current = (await rawDocument(idx.opensearch, idx.alias, id))!;
    const outcomes = await writeBulk(idx.opensearch, idx.alias, [
      { kind: "delete", id, version: 1 },
      { kind: "index", id, version: 1, versionType: "external", document: { ...current, title: "stale" } as never },
    ]);
    expect(outcomes.map((o) => o.result)).toEqual(["superseded", "superseded"]);
    expect((await rawDocument(idx.opensearch, idx.alias, id))!.title).toBe(current.title);
  });

  test("events that can never be indexed are reported as permanent failures (dead-letter), the rest is indexed", async () => {
    const id = await putListing(uniqueName("listing"), sample.listing(brokerId));
    await indexedState(api.sql, id);
    const [good] = await api.sql`SELECT payload FROM outbox WHERE message_key = ${String(id)} ORDER BY id LIMIT 1`;
    const ctx = { topic: Topics.listingEvents.name, partition: 0, offset: "0", trace: NO_TRACE, log: silentLogger };
    const broken = {
      ...good!.payload,
      eventId: crypto.randomUUID(),
      payload: { ...good!.payload.payload, status: "LIVE" },
    };
    const unknown = {
      ...good!.payload,
      eventId: crypto.randomUUID(),
      aggregateId: "999999999999",
      payload: { ...good!.payload.payload, listingId: 999999999999 },
    };
    const failures = await idx.indexer.handleBatch([
      { event: broken, ctx },
      { event: unknown, ctx },
      { event: good!.payload, ctx },
    ]);
    expect(failures.map((f) => [f.event, f.reason])).toEqual([
      [broken, expect.stringContaining("listing payload is not valid")],
      [unknown, "listing 999999999999 does not exist"],
    ]);
  });
});

describe("description rewriting", () => {
  test("the index gets the optimized description; the original stays and both are in the read-back", async () => {
    const externalId = uniqueName("listing");
    const original =
      "GREAT CAFE FOR SALE!!! Call 512-555-0199 or write owner@cafe-example.com. Visit www.cafe-example.com   today.";
    const id = await putListing(externalId, sample.listing(brokerId, { description: original }));
    await indexedState(api.sql, id);
    const { body } = await partner.get(`/partner/v1/listings/${externalId}`);
    expect(body.listing.description).toBe(original);
    expect(body.listing.descriptionOptimized).toBe("Great cafe for sale! Today.");
    expect((await rawDocument(idx.opensearch, idx.alias, id))!.description).toBe("Great cafe for sale! Today.");
    const [row] = await api.sql`SELECT description FROM listings WHERE id = ${id}`;
    expect(row!.description).toBe(original);
  });

  test("a changed description is rewritten again; an unchanged one keeps its rewrite", async () => {
    const externalId = uniqueName("listing");
    const id = await putListing(externalId, sample.listing(brokerId, { description: "First text. Email a@b.com" }));
    await indexedState(api.sql, id);
    await putListing(externalId, { description: "Second text, call +1 512 555 0123." });
    await indexedState(api.sql, id);
    expect((await partner.get(`/partner/v1/listings/${externalId}`)).body.listing.descriptionOptimized).toBe(
      "Second text.",
    );
    await putListing(externalId, { title: "Only the title changes" });
    await indexedState(api.sql, id);
    expect((await partner.get(`/partner/v1/listings/${externalId}`)).body.listing.descriptionOptimized).toBe(
      "Second text.",
    );
  });
});
