// The whole lead path on real servers: the API takes a lead (PostgreSQL + outbox), the relay publishes it to
// Kafka, the leads workers count it and e-mail it through a real SMTP server on loopback.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Kafka, logLevel } from "kafkajs";
import { Topics } from "@pss/contracts";
import { createLogger } from "@pss/service-kit";
import { createPartnerAdmin } from "../../api/src/admin/partner-admin.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import { createSmtpCheck, createSmtpTransport } from "../src/forwarding/smtp-transport.ts";
import { createLeadsWorkers } from "../src/leads-workers.ts";
import { startSmtpSink, type SmtpSink } from "./support/smtp-sink.ts";

const FROM = "Marketplace leads <leads@market.example.test>";
const messageId = (leadId: string) => `<lead-${leadId}@market.example.test>`;

let api: ApiHarness;
let sink: SmtpSink;
let kafka: Kafka;
let transport: ReturnType<typeof createSmtpTransport>;
let workers: ReturnType<typeof createLeadsWorkers>;
const groupPrefix = uniqueName("leads-test");
const partnerIds: string[] = [];
const logLines: string[] = [];

beforeAll(async () => {
  api = await startApi();
  // Recipients named by what they answer: greylisted once (451), deferring forever (452), unknown (550).
  sink = await startSmtpSink({
    reply: (address, attempt) => {
      if (address.startsWith("greylisted-") && attempt === 1)
        return { code: 451, text: "4.7.1 Greylisted, try again later" };
      if (address.startsWith("full-")) return { code: 452, text: "4.2.2 Mailbox full" };
      if (address.startsWith("unknown-")) return { code: 550, text: "5.1.1 No such user" };
      return null;
    },
  });
  kafka = new Kafka({
    clientId: uniqueName("leads-test"),
    brokers: testUrls().KAFKA_BROKERS.split(","),
    logLevel: logLevel.NOTHING,
  });
  transport = createSmtpTransport({
    host: "127.0.0.1",
    port: sink.port,
    secure: false,
    from: FROM,
    fromDomain: "market.example.test",
  });
  workers = createLeadsWorkers({
    sql: api.sql,
    kafka,
    logger: createLogger({ service: "leads-test", level: "debug", write: (line) => logLines.push(line) }),
    groupPrefix,
    publicBaseUrl: "https://market.example.test",
    mail: { transport, from: FROM, messageIdDomain: "market.example.test" },
    policy: { maxAttempts: 3, retryBaseMs: 200, claimTimeoutMs: 60_000 },
    sweepIntervalMs: 100,
    firstAttemptGraceMs: 60_000,
    backoff: { initialMs: 100, maxMs: 1000 },
    // Other runs share this Kafka topic and database: touch only this file's partners.
    partnerIds: () => partnerIds,
  });
  await workers.start();
});
afterAll(async () => {
  await workers?.stop();
  transport?.close();
  await sink?.stop();
  await api?.stop();
});

async function newPartner(): Promise<Partner> {
  const p = await api.createPartner({ leadTracking: true });
  partnerIds.push(p.partnerId);
  return p;
}

async function brokerAndListing(p: Partner, broker: Record<string, unknown>, title = "Profitable taqueria downtown") {
  const brokerExternalId = uniqueName("broker");
  expect((await p.put(`/partner/v1/brokers/${brokerExternalId}`, broker)).status).toBe(201);
  const res = await p.put(`/partner/v1/listings/${uniqueName("listing")}`, sample.listing(brokerExternalId, { title }));
  expect(res.status).toBe(201);
  return { brokerExternalId, listingId: res.body.serviceListingId as number };
}

const buyer = {
  name: "Ann Buyer",
  email: "ann.buyer@example.com",
  phone: "+1 512 555 0199",
  message: "Is the lease renewable?\n<b>Cash</b> buyer & ready.",
};

async function submitLead(listingId: number, body: Record<string, unknown> = buyer): Promise<string> {
  const res = await call(api.marketplaceUrl, "POST", `/v1/listings/${listingId}/leads`, { body });
  expect(res.status).toBe(202);
  return res.body.leadId;
}

async function eventually<T>(
  what: string,
  read: () => Promise<T>,
  accept: (v: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await read();
  while (!accept(last)) {
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(last)} after ${timeoutMs} ms`);
    await Bun.sleep(50);
    last = await read();
  }
  return last;
}

const delivery = async (leadId: string) =>
  (
    await api.sql`SELECT delivery_state AS state, delivery_attempts AS attempts, delivery_last_error AS "lastError", delivered_to AS "deliveredTo" FROM leads WHERE id = ${leadId}`
  )[0]!;
const officeTotal = async (p: Partner, officeId: number) =>
  (await p.get(`/partner/v1/offices/${officeId}/leads/count`)).body.totalLeads as number;

describe("forwarding and counting", () => {
  test("a lead is e-mailed once to the broker's forwarding address, replies going to the buyer, and counted for its office and organization", async () => {
    const p = await newPartner();
    const forwarding = `${uniqueName("crm")}@crm.example.com`;
    const { listingId } = await brokerAndListing(p, sample.broker({ forwardingEmail: forwarding }));
    const leadId = await submitLead(listingId);

    const mail = await sink.waitFor(messageId(leadId));
    expect(mail.envelopeTo).toEqual([forwarding]);
    expect(mail.envelopeFrom).toBe("leads@market.example.test");
    expect(mail.headers.to).toBe(forwarding);
    expect(mail.headers.from).toBe(FROM);
    expect(mail.headers["reply-to"]).toBe("Ann Buyer <ann.buyer@example.com>");
    expect(mail.headers.subject).toBe("New inquiry: Profitable taqueria downtown");
    expect(mail.text).toContain(`https://market.example.test/listings/${listingId}`);
    expect(mail.text).toContain(buyer.message);
    expect(mail.text).toContain("Phone: +1 512 555 0199");
    expect(mail.html).toContain(
      `<a href="https://market.example.test/listings/${listingId}">Profitable taqueria downtown</a>`,
    );
    expect(mail.html).toContain("Is the lease renewable?\n&lt;b&gt;Cash&lt;/b&gt; buyer &amp; ready.");
    // The worker records "sent" after the SMTP server accepted the mail, so the sink can see it first.
    expect(
      await eventually(
        "delivery state",
        () => delivery(leadId),
        (d) => d.state === "sent",
      ),
    ).toEqual({ state: "sent", attempts: 1, lastError: null, deliveredTo: forwarding });

    expect(
      await eventually(
        "office count",
        () => officeTotal(p, p.officeId),
        (n) => n === 1,
      ),
    ).toBe(1);
    const org = await p.get(`/partner/v1/organizations/${p.organizationId}/leads/count`);
    expect(org.body).toMatchObject({ totalLeads: 1, officeBreakdown: [{ officeId: p.officeId, totalLeads: 1 }] });
    expect(sink.byMessageId(messageId(leadId))).toHaveLength(1);
  });

  test("a broker without a forwarding address gets the lead at the broker's own e-mail", async () => {
    const p = await newPartner();
    const own = `${uniqueName("broker")}@brokerage.example.com`;
    const { forwardingEmail: _, ...broker } = sample.broker({ email: own });
    const { listingId } = await brokerAndListing(p, broker, "Corner bakery");
    const leadId = await submitLead(listingId, { name: "Bo", email: "bo@example.com", message: "Hi" });
    const mail = await sink.waitFor(messageId(leadId));
    expect(mail.envelopeTo).toEqual([own]);
    expect(mail.text).not.toContain("Phone:");
    expect(
      (
        await eventually(
          "delivery state",
          () => delivery(leadId),
          (d) => d.state === "sent",
        )
      ).deliveredTo,
    ).toBe(own);
  });

  test("a redelivered lead event changes nothing: the count stays, no second e-mail", async () => {
    const p = await newPartner();
    const { listingId } = await brokerAndListing(
      p,
      sample.broker({ forwardingEmail: `${uniqueName("crm")}@crm.example.com` }),
    );
    const leadId = await submitLead(listingId);
    await sink.waitFor(messageId(leadId));
    await eventually(
      "office count",
      () => officeTotal(p, p.officeId),
      (n) => n === 1,
    );

    // The very envelope the relay published, sent again (what an at-least-once redelivery looks like).
    const [row] = await api.sql`SELECT payload FROM outbox WHERE message_key = ${leadId}`;
    const producer = kafka.producer();
    await producer.connect();
    const [sent] = await producer.send({
      topic: Topics.leadEvents.name,
      messages: [{ key: leadId, value: JSON.stringify(row!.payload) }],
    });
    await producer.disconnect();
    const admin = kafka.admin();
    await admin.connect();
    try {
      for (const groupId of [`${groupPrefix}-counter`, `${groupPrefix}-mailer`]) {
        await eventually(
          `${groupId} past the repeat`,
          async () => {
            const [topic] = await admin.fetchOffsets({ groupId, topics: [Topics.leadEvents.name] });
            return Number(topic!.partitions.find((x) => x.partition === sent!.partition)!.offset);
          },
          (offset) => offset > Number(sent!.baseOffset),
        );
      }
    } finally {
      await admin.disconnect();
    }
    expect(await officeTotal(p, p.officeId)).toBe(1);
    expect((await api.sql`SELECT count(*)::int AS n FROM counted_leads WHERE lead_id = ${leadId}`)[0]!.n).toBe(1);
    expect(
      (
        await api.sql`SELECT sum(lead_count)::int AS n FROM lead_count_buckets WHERE office_id = ${p.officeId} AND granularity = 'hour'`
      )[0]!.n,
    ).toBe(1);
    expect(sink.byMessageId(messageId(leadId))).toHaveLength(1);
    expect((await delivery(leadId)).attempts).toBe(1);
  });

  test("a broker moved to another office keeps its earlier leads counted for the old office", async () => {
    const p = await newPartner();
    const { brokerExternalId, listingId } = await brokerAndListing(p, sample.broker());
    const first = await submitLead(listingId);
    await eventually(
      "old office count",
      () => officeTotal(p, p.officeId),
      (n) => n === 1,
    );

    const admin = createPartnerAdmin({ sql: api.sql, redis: api.redis });
    const { officeId: uptown } = await admin.createOffice({ organizationId: p.organizationId, name: "Uptown" });
    await admin.assignBrokerOffice({ partnerId: p.partnerId, externalBrokerId: brokerExternalId, officeId: uptown });
    const second = await submitLead(listingId);
    await eventually(
      "new office count",
      () => officeTotal(p, uptown),
      (n) => n === 1,
    );

    expect(await officeTotal(p, p.officeId)).toBe(1);
    const org = await p.get(`/partner/v1/organizations/${p.organizationId}/leads/count`);
    expect(org.body.totalLeads).toBe(2);
    expect(org.body.officeBreakdown.map((o: any) => [o.officeId, o.totalLeads])).toEqual([
      [p.officeId, 1],
      [uptown, 1],
    ]);
    const offices = await api.sql`SELECT id, office_id FROM leads WHERE id IN ${api.sql([first, second])}`;
    expect(Object.fromEntries(offices.map((r) => [r.id, r.office_id]))).toEqual({
      [first]: p.officeId,
      [second]: uptown,
    });
  });
});

describe("delivery failures", () => {
  test("a deferral (4xx) is retried with backoff and the lead is then e-mailed exactly once", async () => {
    const p = await newPartner();
    const address = `greylisted-${uniqueName("x")}@crm.example.com`;
    const { listingId } = await brokerAndListing(p, sample.broker({ forwardingEmail: address }));
    const leadId = await submitLead(listingId);
    const mail = await sink.waitFor(messageId(leadId));
    expect(mail.envelopeTo).toEqual([address]);
    expect(
      await eventually(
        "delivery state",
        () => delivery(leadId),
        (d) => d.state === "sent",
      ),
    ).toEqual({ state: "sent", attempts: 2, lastError: null, deliveredTo: address });
    await Bun.sleep(500);
    expect(sink.byMessageId(messageId(leadId))).toHaveLength(1);
  });

  test("a permanent refusal (5xx) is recorded as failed with the server's answer and not retried", async () => {
    const p = await newPartner();
    const { listingId } = await brokerAndListing(
      p,
      sample.broker({ forwardingEmail: `unknown-${uniqueName("x")}@crm.example.com` }),
    );
    const leadId = await submitLead(listingId);
    const failed = await eventually(
      "failed",
      () => delivery(leadId),
      (d) => d.state === "failed",
    );
    expect(failed.attempts).toBe(1);
    expect(failed.lastError).toContain("550");
    await Bun.sleep(700);
    expect((await delivery(leadId)).attempts).toBe(1);
    expect(sink.byMessageId(messageId(leadId))).toHaveLength(0);
    // Counting does not depend on delivery.
    expect(
      await eventually(
        "count",
        () => officeTotal(p, p.officeId),
        (n) => n === 1,
      ),
    ).toBe(1);
  });

  test("a deferral that never clears gives up after the configured number of attempts", async () => {
    const p = await newPartner();
    const { listingId } = await brokerAndListing(
      p,
      sample.broker({ forwardingEmail: `full-${uniqueName("x")}@crm.example.com` }),
    );
    const leadId = await submitLead(listingId);
    const failed = await eventually(
      "gave up",
      () => delivery(leadId),
      (d) => d.state === "failed",
    );
    expect(failed.attempts).toBe(3);
    expect(failed.lastError).toStartWith("gave up after 3 attempts: 452");
  });
});

test("worker logs name leads and a masked recipient, never the buyer's details or the message", async () => {
  const log = logLines.join("\n");
  expect(log).toContain("lead forwarded");
  expect(log).toMatch(/"to":"l\*\*\*@crm\.example\.com"/);
  expect(log).not.toMatch(/Ann Buyer|ann\.buyer@example\.com|lease renewable|555 0199/);
  expect(log).not.toMatch(/"[^"*]+@crm\.example\.com"/);
});

test("the SMTP readiness check passes against a reachable server and fails against a closed port", async () => {
  await createSmtpCheck(transport)();
  const closed = createSmtpTransport({ host: "127.0.0.1", port: 1, secure: false, from: FROM, fromDomain: "x" });
  try {
    await expect(createSmtpCheck(closed)()).rejects.toThrow();
  } finally {
    closed.close();
  }
});
