// A record's journey in the logs (docs/operations.md, "Following one request"), on the real servers: a partner
// PUT's X-Request-Id and trace go into its outbox row, onto the Kafka message as headers, into every log line the
// relay and the consumers (media, indexer) write about the record, and onto a dead letter; a buyer's lead travels
// the same way to the leads workers. Each step is a span of its own (its own parent ID in the traceparent it
// passes on); the trace ID is the same all the way. Tracing records nothing here (test/tracing/ has the spans). Every service logs into arrays here,
// exactly the JSON lines it would print, and "grep" is a substring search over them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Kafka, logLevel } from "kafkajs";
import { Topics } from "@pss/contracts";
import { parseTraceparent, traceIdOf } from "@pss/service-kit";
import { readDeadLetters } from "@pss/service-kit/dead-letters";
import { captureLogs, type LogLine } from "../../../test/support/captured-logs.ts";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import {
  deleteSearchIndex,
  indexedState,
  startIndexer,
  type IndexerHarness,
} from "../../indexer/test/support/indexer-harness.ts";
import { createSmtpTransport } from "../../leads/src/forwarding/smtp-transport.ts";
import { createLeadsWorkers } from "../../leads/src/leads-workers.ts";
import { startSmtpSink, type SmtpSink } from "../../leads/test/support/smtp-sink.ts";
import { startImageServer, type ImageServer } from "../../media/test/support/image-server.ts";
import { startGroupAtEnd, startMedia, until, type MediaHarness } from "../../media/test/support/media-harness.ts";
import { messageAt, waitForOutboxDrained } from "./support/events.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "./support/harness.ts";

const logs = captureLogs();
const indexerGroup = uniqueName("journey-indexer");
const leadsPrefix = uniqueName("journey-leads");
const TRACE_ID = [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
const CLIENT_PARENT = "b7ad6b7169203331";

let images: ImageServer;
let api: ApiHarness;
let media: MediaHarness;
let indexer: IndexerHarness;
let sink: SmtpSink;
let workers: ReturnType<typeof createLeadsWorkers>;
let transport: ReturnType<typeof createSmtpTransport>;
let partner: Partner;
let kafka: Kafka;
const partnerIds: string[] = [];

beforeAll(async () => {
  images = await startImageServer();
  api = await startApi({ logger: logs.logger("api") });
  partner = await api.createPartner();
  partnerIds.push(partner.partnerId);
  media = await startMedia({
    partners: [partner.partnerId],
    logger: logs.logger("media"),
    env: { MEDIA_ALLOWED_HOSTS: `127.0.0.1:${images.port}` },
  });
  kafka = new Kafka({
    clientId: uniqueName("journey"),
    brokers: testUrls().KAFKA_BROKERS.split(","),
    logLevel: logLevel.NOTHING,
  });
  // The indexer starts later (see the dead-letter test); its group reads from here on.
  await startGroupAtEnd(kafka, indexerGroup, [Topics.listingEvents.name, Topics.brokerEvents.name]);
  await startGroupAtEnd(kafka, `${leadsPrefix}-counter`, [Topics.leadEvents.name]);
  await startGroupAtEnd(kafka, `${leadsPrefix}-mailer`, [Topics.leadEvents.name]);
  sink = await startSmtpSink();
  transport = createSmtpTransport({
    host: "127.0.0.1",
    port: sink.port,
    secure: false,
    from: "Leads <leads@market.example.test>",
    fromDomain: "market.example.test",
  });
  workers = createLeadsWorkers({
    sql: api.sql,
    kafka,
    logger: logs.logger("leads"),
    groupPrefix: leadsPrefix,
    publicBaseUrl: "https://market.example.test",
    mail: { transport, from: "Leads <leads@market.example.test>", messageIdDomain: "market.example.test" },
    policy: { maxAttempts: 3, retryBaseMs: 200, claimTimeoutMs: 60_000 },
    sweepIntervalMs: 200,
    firstAttemptGraceMs: 60_000,
    backoff: { initialMs: 100, maxMs: 1000 },
    partnerIds: () => partnerIds,
  });
  await workers.start();
});

afterAll(async () => {
  await indexer?.stop();
  await workers?.stop();
  transport?.close();
  await sink?.stop();
  await media?.stop();
  await api?.stop();
  images?.stop();
  if (indexer) await deleteSearchIndex(indexer.alias);
});

const linesOf = (service: string, requestId: string) => logs.lines(service).filter((l) => l.requestId === requestId);
const messages = (lines: LogLine[]) => lines.map((l) => l.msg);

/** The PUT of a listing as a partner's client sends it, with its own request ID and trace. */
async function putTraced(externalId: string, body: unknown, requestId: string) {
  const res = await call(api.baseUrl, "PUT", `/partner/v1/listings/${externalId}`, {
    key: partner.apiKey,
    body,
    headers: { "x-request-id": requestId, traceparent: `00-${TRACE_ID}-${CLIENT_PARENT}-01` },
  });
  expect([200, 201]).toContain(res.status);
  return {
    id: res.body.serviceListingId as number,
    traceparent: res.headers.get("traceparent")!,
    requestId: res.headers.get("x-request-id")!,
  };
}

describe("one PUT's journey through the logs", () => {
  const brokerExternalId = uniqueName("broker");
  let journey: { id: number; traceparent: string; requestId: string };
  let poison: { id: number; traceparent: string; requestId: string };

  test("the API answers with the request ID it was given and a traceparent continuing the client's trace", async () => {
    expect((await partner.put(`/partner/v1/brokers/${brokerExternalId}`, sample.broker())).status).toBe(201);
    const requestId = uniqueName("journey-put");
    journey = await putTraced(
      uniqueName("listing"),
      sample.listing(brokerExternalId, {
        photos: [{ url: images.url(`/photo.jpg?journey=${requestId}`), sortKey: 1 }],
      }),
      requestId,
    );
    expect(journey.requestId).toBe(requestId);
    const parsed = parseTraceparent(journey.traceparent)!;
    // The client's trace goes on; whether it is recorded is our own sampling's decision (off here), not its flag's.
    expect(parsed).toMatchObject({ traceId: TRACE_ID, flags: "00" });
    // The API's own step of the trace, not the client's.
    expect(parsed.parentId).not.toBe(CLIENT_PARENT);

    // A second listing whose event the indexer will never be able to handle: its row is gone when the event arrives.
    poison = await putTraced(
      uniqueName("listing"),
      sample.listing(brokerExternalId, { photos: [] }),
      uniqueName("journey-poison"),
    );
    await waitForOutboxDrained(api.sql, String(poison.id));
    await api.sql`DELETE FROM listings WHERE id = ${poison.id}`;

    // An answer without a client trace starts one, and an error answer carries both headers too.
    const plain = await call(api.baseUrl, "GET", "/partner/v1/listings/does-not-exist", { key: partner.apiKey });
    expect(plain.status).toBe(404);
    expect(plain.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(traceIdOf(plain.headers.get("traceparent"))).not.toBeNull();
    expect(traceIdOf(plain.headers.get("traceparent"))).not.toBe(TRACE_ID);
  });

  test("the outbox row and the Kafka message carry the request ID and the traceparent", async () => {
    await waitForOutboxDrained(api.sql, String(journey.id));
    const rows =
      await api.sql`SELECT request_id, traceparent, payload->>'eventId' AS event_id FROM outbox WHERE message_key = ${String(journey.id)} AND topic = ${Topics.listingEvents.name}`;
    expect(rows.map((r) => [r.request_id, r.traceparent])).toEqual([[journey.requestId, journey.traceparent]]);

    // Where the relay put it, from its "event published" line.
    const published = linesOf("api", journey.requestId).find((l) => l.msg === "event published")!;
    expect(published).toMatchObject({
      component: "outbox-relay",
      traceparent: journey.traceparent,
      eventId: rows[0]!.event_id,
      topic: Topics.listingEvents.name,
      key: String(journey.id),
    });
    // The indexer starts now; its "event handled" line names the message's position.
    // Only this partner's events: the group reads everything written since it started, and other files and runs
    // write to the same topics meanwhile (every foreign listing a dead letter of its own, ahead of ours).
    indexer = await startIndexer({
      groupId: indexerGroup,
      startAtEnd: false,
      onlyPartners: new Set(partnerIds),
      logger: logs.logger("indexer"),
    });
    await indexedState(api.sql, journey.id, 30_000);
    const handled = await until("the indexer's event handled line", () =>
      linesOf("indexer", journey.requestId).find((l) => l.msg === "event handled"),
    );
    const message = await messageAt(
      kafka,
      handled.topic as string,
      handled.partition as number,
      handled.offset as string,
    );
    expect(message.key).toBe(String(journey.id));
    expect(JSON.parse(message.value!).eventId).toBe(rows[0]!.event_id);
    // The relay's publish is a step of its own: the same trace, its own span.
    expect(message.headers["x-request-id"]).toBe(journey.requestId);
    expect(traceIdOf(message.headers.traceparent)).toBe(TRACE_ID);
    expect(message.headers.traceparent).not.toBe(journey.traceparent);
  }, 90_000);

  test("every service's lines about the record carry the request ID and trace ID; grep finds the whole journey", async () => {
    await until("the photo to be processed", async () => {
      const [photo] = await api.sql`SELECT state FROM listing_photos WHERE listing_id = ${journey.id}`;
      return photo?.state === "ready";
    });
    const eventId = linesOf("api", journey.requestId).find((l) => l.msg === "event published")!.eventId;
    await until("media's event handled line", () =>
      linesOf("media", journey.requestId).some((l) => l.msg === "event handled"),
    );

    const api_ = linesOf("api", journey.requestId);
    expect(messages(api_)).toEqual(expect.arrayContaining(["request", "event published"]));
    expect(api_.find((l) => l.msg === "request")).toMatchObject({
      method: "PUT",
      status: 201,
      traceparent: journey.traceparent,
      partnerId: partner.partnerId,
    });

    const mediaLines = linesOf("media", journey.requestId);
    expect(messages(mediaLines)).toEqual(expect.arrayContaining(["processing images", "image ready", "event handled"]));
    const indexerLines = linesOf("indexer", journey.requestId);
    expect(messages(indexerLines)).toEqual(expect.arrayContaining(["listing indexed", "event handled"]));
    for (const line of [...mediaLines, ...indexerLines]) {
      expect(traceIdOf(line.traceparent as string)).toBe(TRACE_ID);
      expect(line).toMatchObject({
        traceId: TRACE_ID,
        eventId,
        eventType: "listing.upserted",
        aggregateId: String(journey.id),
        version: 1,
        topic: Topics.listingEvents.name,
      });
    }
    for (const line of [...mediaLines, ...indexerLines].filter((l) => l.msg === "event handled")) {
      expect(line.outcome).toBe("handled");
      expect(typeof line.durationMs).toBe("number");
    }

    // What an operator runs: one grep over all logs shows the API, the relay, media and the indexer.
    const grepped = logs.grep(journey.requestId);
    expect(new Set(grepped.map((l) => l.service))).toEqual(new Set(["api", "media", "indexer"]));
    expect(grepped.every((l) => l.requestId === journey.requestId)).toBe(true);
    // The trace ID finds the same lines (and nothing else's: it was made for this test).
    const byTrace = logs.grep(TRACE_ID).filter((l) => l.requestId === journey.requestId);
    expect(byTrace.length).toBe(grepped.length);
  }, 60_000);

  test("a dead letter keeps the request ID and trace of the write that caused it", async () => {
    const dead = await until(
      "the poison event's dead letter line",
      () => linesOf("indexer", poison.requestId).find((l) => l.msg === "message sent to dead-letter topic"),
      30_000,
    );
    expect(dead).toMatchObject({
      level: "error",
      traceId: traceIdOf(poison.traceparent),
      reason: `listing ${poison.id} does not exist`,
      deadLetterTopic: Topics.indexerDeadLetter.name,
    });
    expect(linesOf("indexer", poison.requestId).find((l) => l.msg === "event handled")).toMatchObject({
      outcome: "dead-lettered",
      reason: `listing ${poison.id} does not exist`,
    });

    // Where the line says it landed (what `dlq show --offset` takes).
    const letters = (
      await readDeadLetters(kafka, Topics.indexerDeadLetter.name, { offset: String(dead.deadLetterOffset) })
    ).filter((l) => l.partition === dead.deadLetterPartition);
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({
      key: String(poison.id),
      reason: `listing ${poison.id} does not exist`,
      consumerGroup: indexerGroup,
      sourceTopic: Topics.listingEvents.name,
    });
    expect(letters[0]!.headers["x-request-id"]).toBe(poison.requestId);
    expect(traceIdOf(letters[0]!.headers.traceparent)).toBe(traceIdOf(poison.traceparent));
  }, 60_000);

  test("a lead's request ID and trace reach the counting and mailing workers, without the buyer's details", async () => {
    const requestId = uniqueName("journey-lead");
    const buyer = {
      name: "Journey Buyer",
      email: "journey.buyer@example.com",
      message: "Quokka-zebra question: is the lease renewable?",
    };
    const res = await call(api.marketplaceUrl, "POST", `/v1/listings/${journey.id}/leads`, {
      body: buyer,
      headers: { "x-request-id": requestId },
    });
    expect(res.status).toBe(202);
    const traceparent = res.headers.get("traceparent")!;
    expect(res.headers.get("x-request-id")).toBe(requestId);
    await until(
      "the lead to be forwarded",
      () => linesOf("leads", requestId).some((l) => l.msg === "lead forwarded"),
      30_000,
    );
    await until(
      "both leads groups to log the event",
      () => linesOf("leads", requestId).filter((l) => l.msg === "event handled").length === 2,
      30_000,
    );

    expect(messages(linesOf("api", requestId))).toEqual(
      expect.arrayContaining(["request", "lead accepted", "event published"]),
    );
    const leadLines = linesOf("leads", requestId);
    expect(new Set(leadLines.filter((l) => l.msg === "event handled").map((l) => l.groupId))).toEqual(
      new Set([`${leadsPrefix}-counter`, `${leadsPrefix}-mailer`]),
    );
    for (const line of leadLines)
      expect(line).toMatchObject({
        traceId: traceIdOf(traceparent),
        eventType: "lead.submitted",
        aggregateId: res.body.leadId,
        topic: Topics.leadEvents.name,
      });
    expect(leadLines.find((l) => l.msg === "lead forwarded")).toMatchObject({
      leadId: res.body.leadId,
      to: "l***@crm.example.com",
    });

    // Never in any log: the buyer's contact details and text, full e-mail addresses, the API key.
    const all = logs.raw().join("\n");
    for (const secret of [
      buyer.email,
      buyer.name,
      "Quokka-zebra",
      partner.apiKey,
      "jane.broker@example.com",
      "leads@crm.example.com",
    ])
      expect(all).not.toContain(secret);
  }, 60_000);
});
