import { afterAll, beforeAll, expect, test } from "bun:test";
import { Topics } from "@pss/contracts";
import { createLogger } from "@pss/service-kit";
import { uniqueName } from "../../../test/support/env.ts";
import { sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
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
let partner: Partner;
const alias = newAlias();
const groupId = uniqueName("indexer-outage");
const running: IndexerHarness[] = [];

beforeAll(async () => {
  api = await startApi({ searchAlias: alias });
  partner = await api.createPartner();
});
afterAll(async () => {
  for (const idx of running) await idx.stop().catch(() => {});
  await api.stop();
  await deleteSearchIndex(alias);
});

/** The consumer group's committed offsets on the listing topic (a Kafka client needs no running consumer). */
async function committedOffsets(idx: IndexerHarness): Promise<string> {
  const admin = idx.kafka.admin();
  await admin.connect();
  try {
    const [listing] = await admin.fetchOffsets({ groupId, topics: [Topics.listingEvents.name] });
    return JSON.stringify(listing!.partitions.map((p) => [p.partition, p.offset]).sort());
  } finally {
    await admin.disconnect();
  }
}

test("while OpenSearch is unreachable nothing is committed; once it is back the index converges", async () => {
  const brokerId = uniqueName("broker");
  await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker());

  // A healthy indexer indexes a first listing and commits.
  const healthy = await startIndexer({ alias, groupId });
  running.push(healthy);
  const first = uniqueName("listing");
  const firstId = (
    await partner.put(`/partner/v1/listings/${first}`, sample.listing(brokerId, { title: "Before the outage" }))
  ).body.serviceListingId;
  expect(await indexedState(api.sql, firstId)).toEqual({ state: "indexed", version: 1 });
  await healthy.stop();
  running.splice(running.indexOf(healthy), 1);
  const committedBefore = await committedOffsets(healthy);

  // The same consumer group, but its OpenSearch is a closed port.
  const lines: string[] = [];
  const broken = await startIndexer({
    alias,
    groupId,
    startAtEnd: false,
    opensearchUrl: "http://127.0.0.1:9",
    logger: createLogger({ service: "indexer-test", level: "warn", write: (l) => lines.push(l) }),
  });
  running.push(broken);
  await partner.put(`/partner/v1/listings/${first}`, { title: "Changed during the outage" });
  await partner.put(`/partner/v1/listings/${first}`, { status: "SOLD" });
  const second = uniqueName("listing");
  const secondId = (
    await partner.put(
      `/partner/v1/listings/${second}`,
      sample.listing(brokerId, { title: "Created during the outage" }),
    )
  ).body.serviceListingId;

  await until(
    "the broken indexer to fail and retry",
    async () => lines.filter((l) => l.includes("handler failed; retrying")).length >= 3,
  );
  expect(await committedOffsets(broken)).toBe(committedBefore);
  expect((await partner.get(`/partner/v1/listings/${first}`)).body.listing.searchIndex).toEqual({ state: "pending" });
  expect((await partner.get(`/partner/v1/listings/${second}`)).body.listing.searchIndex).toEqual({ state: "pending" });
  expect((await rawDocument(broken.opensearch, alias, firstId))!.title).toBe("Before the outage");

  // Stopping abandons the retries without committing.
  await broken.stop();
  running.splice(running.indexOf(broken), 1);
  expect(await committedOffsets(broken)).toBe(committedBefore);

  // OpenSearch is back: the uncommitted events are redelivered and the index converges.
  const recovered = await startIndexer({ alias, groupId, startAtEnd: false });
  running.push(recovered);
  expect(await indexedState(api.sql, firstId)).toEqual({ state: "removed", version: 3 });
  expect(await indexedState(api.sql, secondId)).toEqual({ state: "indexed", version: 1 });
  expect(await rawDocument(recovered.opensearch, alias, firstId)).toBeNull();
  expect((await rawDocument(recovered.opensearch, alias, secondId))!.title).toBe("Created during the outage");
  expect(await committedOffsets(recovered)).not.toBe(committedBefore);
}, 90_000);
