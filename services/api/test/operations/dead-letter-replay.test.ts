// A poison event end to end, with the admin CLI as the runbook (docs/operations.md, "Dead letters") has an
// operator use it: the indexer dead-letters a listing event whose row is missing, `dlq list` and `dlq show`
// show it with the write's request ID, the row is restored, `dlq replay` sends the event again and the listing
// is indexed; a second replay changes nothing.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Topics } from "@pss/contracts";
import { captureLogs } from "../../../../test/support/captured-logs.ts";
import { uniqueName } from "../../../../test/support/env.ts";
import {
  deleteSearchIndex,
  indexedState,
  newAlias,
  startIndexer,
  until,
  type IndexerHarness,
} from "../../../indexer/test/support/indexer-harness.ts";
import { admin, json } from "../support/admin-cli.ts";
import { waitForOutboxDrained } from "../support/events.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "../support/harness.ts";

const logs = captureLogs();
const alias = newAlias();
const groupId = uniqueName("dlq-indexer");
const backup = uniqueName("dlq_test_backup").replace(/-/g, "_");

let api: ApiHarness;
let indexer: IndexerHarness | undefined;
let partner: Partner;

beforeAll(async () => {
  api = await startApi({ searchAlias: alias });
  partner = await api.createPartner();
});
afterAll(async () => {
  await indexer?.stop();
  await api.sql`DROP TABLE IF EXISTS ${api.sql(backup)}, ${api.sql(`${backup}_history`)}`;
  await api?.stop();
  await deleteSearchIndex(alias);
});

const mine = () => new Set([partner.partnerId]);
const indexerLines = (requestId: string, msg: string) =>
  logs.lines("indexer").filter((l) => l.requestId === requestId && l.msg === msg);

/** OpenSearch's record of the document: a write (even of the same version) moves _seq_no. */
async function stored(id: number) {
  const res = await indexer!.opensearch.get({ index: alias, id: String(id) });
  const body = res.body as unknown as {
    _version: number;
    _seq_no: number;
    _primary_term: number;
    _source: { title: string };
  };
  return { version: body._version, seqNo: body._seq_no, primaryTerm: body._primary_term, title: body._source.title };
}

test("a dead-lettered event is listed and shown with its request ID, and replayed once its cause is fixed; a second replay changes nothing", async () => {
  const brokerId = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
  // The indexer's group starts here; it is stopped while the listing's row goes missing.
  // Only this partner's events: another run's (or lane's) listing event can carry this listing's number.
  indexer = await startIndexer({ alias, groupId, onlyPartners: mine(), logger: logs.logger("indexer") });
  await indexer.stop();
  indexer = undefined;

  const requestId = uniqueName("poison-put");
  const put = await call(api.baseUrl, "PUT", `/partner/v1/listings/${uniqueName("listing")}`, {
    key: partner.apiKey,
    body: sample.listing(brokerId, { title: "Restored bakery", photos: [] }),
    headers: { "x-request-id": requestId },
  });
  expect(put.status).toBe(201);
  const id = put.body.serviceListingId as number;
  // The event continues the request's trace; the message names the relay's producer span (a child of the request's
  // span) and each consumer's span is a child of that: the same trace ID, a span of its own.
  const traceId = put.headers.get("traceparent")!.split("-")[1]!;
  const traceparent = expect.stringMatching(new RegExp(`^00-${traceId}-(?!0{16})[0-9a-f]{16}-0[01]$`));
  await waitForOutboxDrained(api.sql, String(id));
  // The row is lost (a bad manual delete, a restore from an older backup): kept aside here to restore later.
  await api.sql`CREATE TABLE ${api.sql(backup)} AS SELECT * FROM listings WHERE id = ${id}`;
  await api.sql`CREATE TABLE ${api.sql(`${backup}_history`)} AS SELECT * FROM listing_status_history WHERE listing_id = ${id}`;
  await api.sql`DELETE FROM listings WHERE id = ${id}`;

  indexer = await startIndexer({
    alias,
    groupId,
    startAtEnd: false,
    onlyPartners: mine(),
    logger: logs.logger("indexer"),
  });
  const dead = await until(
    "the event to be dead-lettered",
    async () => indexerLines(requestId, "message sent to dead-letter topic")[0],
    30_000,
  );
  const offset = String(dead.deadLetterOffset);

  // dlq list: the newest dead letters of the indexer, here of this test's consumer group.
  const listed = json(await admin(["dlq", "list", "--consumer", "indexer", "--group", groupId]), "dlq list");
  expect(listed.topic).toBe(Topics.indexerDeadLetter.name);
  const entry = listed.deadLetters.find((d: any) => d.requestId === requestId);
  expect(entry).toEqual({
    offset,
    failedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    group: groupId,
    reason: `listing ${id} does not exist`,
    sourceTopic: Topics.listingEvents.name,
    sourcePartition: expect.any(Number),
    sourceOffset: expect.stringMatching(/^\d+$/),
    key: String(id),
    eventType: "listing.upserted",
    version: 1,
    requestId,
    traceparent,
  });

  // dlq show: the headers and the message itself.
  const shown = json(await admin(["dlq", "show", "--consumer", "indexer", "--offset", offset]), "dlq show");
  // The dead letter keeps the traceparent the consumed message carried.
  expect(shown.headers.traceparent).toBe(entry.traceparent);
  expect(shown.headers).toMatchObject({
    "x-request-id": requestId,
    traceparent,
    "x-dead-letter-reason": `listing ${id} does not exist`,
    "x-consumer-group": groupId,
  });
  expect(shown.value).toMatchObject({
    type: "listing.upserted",
    aggregateId: String(id),
    version: 1,
    payload: { listingId: id, title: "Restored bakery" },
  });

  // Fix the cause, then replay.
  await api.sql`INSERT INTO listings SELECT * FROM ${api.sql(backup)}`;
  await api.sql`INSERT INTO listing_status_history SELECT * FROM ${api.sql(`${backup}_history`)}`;
  const replayed = json(await admin(["dlq", "replay", "--consumer", "indexer", "--offset", offset]), "dlq replay");
  expect(replayed).toEqual({
    consumer: "indexer",
    topic: Topics.indexerDeadLetter.name,
    replayed: 1,
    messages: [
      {
        offset,
        sourceTopic: Topics.listingEvents.name,
        sourcePartition: entry.sourcePartition,
        key: String(id),
        eventType: "listing.upserted",
        version: 1,
      },
    ],
  });
  expect(await indexedState(api.sql, id, 30_000)).toEqual({ state: "indexed", version: 1 });
  const replayedFrom = `${Topics.indexerDeadLetter.name}:0:${offset}`;
  const handled = await until("the replayed event's line", async () =>
    indexerLines(requestId, "event handled").find((l) => l.replayedFrom === replayedFrom),
  );
  // The replayed event is the write's: same request ID and traceparent, and it says where it came from.
  expect(handled).toMatchObject({ outcome: "handled", traceparent, aggregateId: String(id), version: 1 });
  expect(indexerLines(requestId, "listing indexed").map((l) => l.result)).toEqual(["applied"]);
  const first = await stored(id);
  expect(first).toMatchObject({ version: 1, title: "Restored bakery" });

  // Replaying again is harmless: handled, but the document is not written again.
  json(await admin(["dlq", "replay", "--consumer", "indexer", "--offset", offset]), "second dlq replay");
  await until(
    "the second replay's line",
    async () => indexerLines(requestId, "event handled").filter((l) => l.replayedFrom === replayedFrom).length === 2,
    30_000,
  );
  expect(indexerLines(requestId, "listing indexed").map((l) => l.result)).toEqual(["applied", "superseded"]);
  expect(await stored(id)).toEqual(first);
  expect(await indexedState(api.sql, id)).toEqual({ state: "indexed", version: 1 });
  // The dead letter stays listed (the topic is a log; it expires after four weeks), and no new one was made.
  const after = json(await admin(["dlq", "list", "--consumer", "indexer", "--group", groupId]), "dlq list");
  expect(after.deadLetters.filter((d: any) => d.requestId === requestId).map((d: any) => d.offset)).toEqual([offset]);
}, 150_000);
