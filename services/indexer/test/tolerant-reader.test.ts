// A newer API version adds fields to events and a newer indexer may add fields to documents: neither may
// dead-letter events or get documents refused here. Real Kafka, PostgreSQL and OpenSearch throughout.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Topics } from "@pss/contracts";
import { silentLogger } from "@pss/service-kit";
import { uniqueName } from "../../../test/support/env.ts";
import { readTopicToEnd } from "../../api/test/support/events.ts";
import { sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { writeBulk } from "../src/search-index/bulk-writer.ts";
import { ensureSearchIndex } from "../src/search-index/ensure-index.ts";
import { INDEX_MAPPINGS, INDEX_SETTINGS } from "../src/search-index/index-definition.ts";
import {
  deleteSearchIndex,
  indexedState,
  newAlias,
  rawDocument,
  startIndexer,
  until,
  type IndexerHarness,
} from "./support/indexer-harness.ts";

let api: ApiHarness;
let idx: IndexerHarness;
let partner: Partner;
let brokerId: string;
const extraAliases: string[] = [];

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
  for (const alias of extraAliases) await deleteSearchIndex(alias);
});

/** Everything this file's consumer group dead-letters is newer than this (the shared topic is read from here). */
const started = new Date(Date.now() - 60_000);

/** Dead-letter messages this test's consumer group wrote for one key, with their reasons. */
async function deadLettersFor(key: string): Promise<string[]> {
  const reasons: string[] = [];
  await readTopicToEnd(
    idx.kafka,
    Topics.indexerDeadLetter.name,
    (message) => {
      if (message.key?.toString() === key && message.headers?.["x-consumer-group"]?.toString() === idx.groupId)
        reasons.push(String(message.headers["x-dead-letter-reason"]));
    },
    { since: started },
  );
  return reasons;
}

describe("the indexer reads events tolerantly", () => {
  test("an event with an unknown envelope field and unknown payload fields, on the real topic, is indexed and not dead-lettered", async () => {
    const externalId = uniqueName("listing");
    const created = await partner.put(
      `/partner/v1/listings/${externalId}`,
      sample.listing(brokerId, { title: "Before the newer API" }),
    );
    expect(created.status).toBe(201);
    const id: number = created.body.serviceListingId;
    await indexedState(api.sql, id);

    // What a newer API version would write: the change and its event in one transaction, the event carrying
    // fields this indexer has never heard of. The real relay publishes it to the real listing topic.
    const [previous] =
      await api.sql`SELECT payload FROM outbox WHERE message_key = ${String(id)} ORDER BY id DESC LIMIT 1`;
    const title = `Written by a newer API ${uniqueName("t")}`;
    await api.sql.begin(async (tx) => {
      const [row] =
        await tx`UPDATE listings SET version = version + 1, title = ${title}, index_state = 'pending' WHERE id = ${id} RETURNING version`;
      const envelope = {
        ...previous!.payload,
        eventId: crypto.randomUUID(),
        version: row!.version,
        occurredAt: new Date().toISOString(),
        schemaRevision: 2,
        traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        payload: {
          ...previous!.payload.payload,
          title,
          energyRating: "A",
          location: { ...previous!.payload.payload.location, geo: { lat: 30.27, lon: -97.74 } },
          financials: { ...previous!.payload.payload.financials, ebitda: 123_000 },
        },
      };
      await tx`INSERT INTO outbox (topic, message_key, payload) VALUES (${Topics.listingEvents.name}, ${String(id)}, ${tx.json(envelope)})`;
    });

    expect(await indexedState(api.sql, id)).toEqual({ state: "indexed", version: 2 });
    const doc = (await rawDocument(idx.opensearch, idx.alias, id))!;
    expect(doc.title).toBe(title);
    // The document is what this indexer builds: fields it does not know are not copied into the index.
    expect(JSON.stringify(doc)).not.toMatch(/energyRating|ebitda/);
    // The payload's own location.geo is not copied either: the document's point is the one this indexer places
    // from the public address (@pss/geo, issue 41), never one an event brings.
    expect((doc.location as Record<string, unknown>).geo).toBeUndefined();
    expect(doc.geo).not.toEqual({ lat: 30.27, lon: -97.74 });
    const indexed = await idx.opensearch.get({ index: idx.alias, id: String(id) });
    expect(indexed.body._version).toBe(2);

    // Control: an event missing a field the indexer uses is still dead-lettered by this consumer group, so the
    // empty dead-letter answer for the tolerant event above is a real observation.
    const { businessType: _, ...withoutBusinessType } = previous!.payload.payload;
    const producer = idx.kafka.producer();
    await producer.connect();
    await producer.send({
      topic: Topics.listingEvents.name,
      messages: [
        {
          key: String(id),
          value: JSON.stringify({
            ...previous!.payload,
            eventId: crypto.randomUUID(),
            version: 2,
            payload: withoutBusinessType,
            schemaRevision: 2,
          }),
        },
      ],
    });
    await producer.disconnect();
    const reasons = await until(
      "the control event in the dead-letter topic",
      async () => {
        const found = await deadLettersFor(String(id));
        return found.length > 0 ? found : null;
      },
      30_000,
    );
    expect(reasons).toEqual([expect.stringContaining("businessType")]);
  }, 90_000);
});

describe("the index mapping tolerates new fields", () => {
  test("a new index keeps unknown fields in _source without indexing them", async () => {
    const mapping = (await idx.opensearch.indices.getMapping({ index: `${idx.alias}-v1` })).body[`${idx.alias}-v1`]!
      .mappings as { dynamic?: string };
    expect(mapping.dynamic).toBe("false");
  });

  test("an existing strict listings-v1 index is relaxed in place at startup and then takes documents with new fields", async () => {
    const alias = newAlias();
    extraAliases.push(alias);
    // As an indexer before this change created it.
    await idx.opensearch.indices.create({
      index: `${alias}-v1`,
      body: {
        settings: INDEX_SETTINGS,
        mappings: { ...INDEX_MAPPINGS, dynamic: "strict" },
        aliases: { [alias]: { is_write_index: true } },
      } as never,
    });
    const document = {
      serviceListingId: 1,
      title: "A bakery",
      description: null,
      businessType: "Bakery",
      status: "FOR_SALE",
      underContract: false,
      location: { city: "Austin", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" },
      financials: {},
      establishedAt: null,
      broker: { serviceBrokerId: "1", name: "Jane" },
      listedAt: "2026-05-01T12:00:00.000Z",
      updatedAt: "2026-05-01T12:00:00.000Z",
      energyRating: "A",
    };
    const refused = await writeBulk(idx.opensearch, alias, [
      { kind: "index", id: 1, version: 1, versionType: "external", document: document as never },
    ]);
    expect(refused[0]).toMatchObject({
      result: "rejected",
      reason: expect.stringContaining("strict_dynamic_mapping_exception"),
    });

    expect(await ensureSearchIndex(idx.opensearch, alias, silentLogger)).toBe(`${alias}-v1`);
    const mapping = (await idx.opensearch.indices.getMapping({ index: `${alias}-v1` })).body[`${alias}-v1`]!
      .mappings as { dynamic?: string; properties: Record<string, unknown> };
    expect(mapping.dynamic).toBe("false");
    expect(Object.keys(mapping.properties)).toEqual(Object.keys(INDEX_MAPPINGS.properties).sort());

    const accepted = await writeBulk(
      idx.opensearch,
      alias,
      [{ kind: "index", id: 1, version: 1, versionType: "external", document: document as never }],
      { refresh: true },
    );
    expect(accepted[0]!.result).toBe("applied");
    expect((await rawDocument(idx.opensearch, alias, 1))!.energyRating).toBe("A");
    // Kept, not indexed: searching the unknown field finds nothing.
    const hits = await idx.opensearch.search({ index: alias, body: { query: { term: { energyRating: "A" } } } });
    expect((hits.body as { hits: { total: { value: number } } }).hits.total.value).toBe(0);
    // A second start has nothing left to change.
    expect(await ensureSearchIndex(idx.opensearch, alias, silentLogger)).toBe(`${alias}-v1`);
  });
});
