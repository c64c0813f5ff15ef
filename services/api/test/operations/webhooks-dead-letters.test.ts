// The webhooks service's dead letters through the admin CLI, as docs/operations.md ("Dead letters") has an
// operator read them: a fact the webhooks consumer can never use (its payload is not an object) is dead-lettered,
// `dlq list --consumer webhooks` and `dlq show` show it with the request ID, and `dlq replay` sends it back to the
// facts topic, where the webhooks consumer receives it again (and, its cause being in the message, refuses it again).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Topics } from "@pss/contracts";
import { captureLogs } from "../../../../test/support/captured-logs.ts";
import { uniqueName } from "../../../../test/support/env.ts";
import { startWebhooks, until, type WebhooksHarness } from "../../../webhooks/test/support/webhooks-harness.ts";
import { admin, json } from "../support/admin-cli.ts";
import { startApi, type ApiHarness, type Partner } from "../support/harness.ts";

const logs = captureLogs();
let api: ApiHarness;
let webhooks: WebhooksHarness;
let partner: Partner;

beforeAll(async () => {
  api = await startApi({ relay: false });
  partner = await api.createPartner();
  webhooks = await startWebhooks({
    allowedHosts: ["127.0.0.1"],
    publicBaseUrl: "https://market.example.test",
    partners: [partner.partnerId],
    logger: logs.logger("webhooks"),
  });
});
afterAll(async () => {
  await webhooks?.stop();
  await api?.stop();
});

const deadLetterLines = (requestId: string) =>
  logs.lines("webhooks").filter((l) => l.requestId === requestId && l.msg === "message sent to dead-letter topic");

test("a fact the webhooks consumer cannot use is listed, shown and replayed with dlq --consumer webhooks", async () => {
  const requestId = uniqueName("poison-fact");
  const key = `listing:${uniqueName("l")}`;
  const envelope = {
    eventId: crypto.randomUUID(),
    type: "listing.published",
    aggregateType: "listing",
    aggregateId: "4711",
    version: 1,
    partnerId: partner.partnerId,
    mode: "live",
    occurredAt: new Date().toISOString(),
    payload: "not an object",
  };
  const producer = api.kafka.producer();
  await producer.connect();
  await producer.send({
    topic: Topics.partnerEvents.name,
    messages: [{ key, value: JSON.stringify(envelope), headers: { "x-request-id": requestId } }],
  });
  await producer.disconnect();

  const dead = await until("the fact to be dead-lettered", async () => deadLetterLines(requestId)[0], 30_000);
  const offset = String(dead.deadLetterOffset);
  const groupId = dead.groupId as string;

  const listed = json(await admin(["dlq", "list", "--consumer", "webhooks", "--group", groupId]), "dlq list");
  expect(listed.consumer).toBe("webhooks");
  expect(listed.topic).toBe(Topics.webhooksDeadLetter.name);
  const entry = listed.deadLetters.find((d: any) => d.requestId === requestId);
  expect(entry).toMatchObject({
    offset,
    group: groupId,
    reason: "listing.published payload is not an object",
    sourceTopic: Topics.partnerEvents.name,
    key,
    eventType: "listing.published",
    version: 1,
    requestId,
  });

  const shown = json(await admin(["dlq", "show", "--consumer", "webhooks", "--offset", offset]), "dlq show");
  expect(shown.headers).toMatchObject({
    "x-request-id": requestId,
    "x-dead-letter-reason": "listing.published payload is not an object",
    "x-consumer-group": groupId,
  });
  expect(shown.value).toMatchObject({ eventId: envelope.eventId, type: "listing.published", payload: "not an object" });

  const replayed = json(await admin(["dlq", "replay", "--consumer", "webhooks", "--offset", offset]), "dlq replay");
  expect(replayed).toMatchObject({ consumer: "webhooks", topic: Topics.webhooksDeadLetter.name, replayed: 1 });
  expect(replayed.messages).toEqual([
    expect.objectContaining({ offset, sourceTopic: Topics.partnerEvents.name, key, eventType: "listing.published" }),
  ]);
  // The webhooks consumer received the replayed fact (it says where from) and, the cause being in the message, refused it again.
  const again = await until(
    "the replayed fact's dead letter",
    async () =>
      deadLetterLines(requestId).find((l) => l.replayedFrom === `${Topics.webhooksDeadLetter.name}:0:${offset}`),
    30_000,
  );
  expect(again.reason).toBe("listing.published payload is not an object");
  // Nothing was delivered for it.
  expect(await api.sql`SELECT 1 FROM webhook_deliveries WHERE event_id = ${envelope.eventId}::uuid`).toHaveLength(0);
}, 120_000);
