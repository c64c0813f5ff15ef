// Our own dependencies being down is never a lead's fault: with our SMTP relay stopped, leads wait (postponed
// without spending an attempt, however many times the relay refuses) and are e-mailed exactly once when it is
// back; with our PostgreSQL unreachable right after a send, the 'sent' mark waits for it instead of leaving the
// lead to be sent again. The relay is a test SMTP server of this file's own; PostgreSQL is cut through a gated
// proxy in front of the shared server (never stopped).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Kafka, logLevel } from "kafkajs";
import postgres from "postgres";
import { createLogger, silentLogger } from "@pss/service-kit";
import { call, sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import {
  createGatedProxy,
  endpointOfUrl,
  viaProxy,
  type GatedProxy,
} from "../../api/test/faults/support/gated-proxy.ts";
import { freePort } from "../../../test/support/ports.ts";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import { createSmtpTransport } from "../src/forwarding/smtp-transport.ts";
import { createLeadsWorkers } from "../src/leads-workers.ts";
import { startSmtpSink, type ReceivedMail, type SmtpSink } from "./support/smtp-sink.ts";

const FROM = "Marketplace leads <leads@market.example.test>";
const messageId = (leadId: string) => `<lead-${leadId}@market.example.test>`;

let api: ApiHarness;
let kafka: Kafka;
let relayPort: number;
/** Every relay this file ran (one per outage that ended): what all of them received. */
const sinks: SmtpSink[] = [];
const received = (leadId: string): ReceivedMail[] => sinks.flatMap((s) => s.byMessageId(messageId(leadId)));
let pgProxy: GatedProxy;
let workerSql: postgres.Sql;
let transport: ReturnType<typeof createSmtpTransport>;
let workers: ReturnType<typeof createLeadsWorkers>;
const partnerIds: string[] = [];
const waits: string[] = [];
/** Resolves the RCPT answers held for recipients starting "hold-". */
let releaseHeld: () => void = () => {};
let held = new Promise<void>((resolve) => (releaseHeld = resolve));
let rcptsHeld = 0;

const startRelay = async () =>
  sinks.push(
    await startSmtpSink({
      port: relayPort,
      wait: (address) => {
        if (!address.startsWith("hold-")) return undefined;
        rcptsHeld++;
        return held;
      },
    }),
  );

beforeAll(async () => {
  api = await startApi();
  relayPort = await freePort();
  pgProxy = await createGatedProxy(endpointOfUrl(testUrls().DATABASE_URL));
  await pgProxy.open();
  // The workers reach PostgreSQL through the proxy (the API and this test do not).
  // Reconnects as the services' client does (service-kit clients.ts), not after postgres.js's default of up to 20 s.
  workerSql = postgres(viaProxy(testUrls().DATABASE_URL, pgProxy), {
    max: 4,
    onnotice: () => {},
    connect_timeout: 2,
    backoff: () => 0.2,
  });
  kafka = new Kafka({
    clientId: uniqueName("leads-outage"),
    brokers: testUrls().KAFKA_BROKERS.split(","),
    logLevel: logLevel.NOTHING,
  });
  transport = createSmtpTransport({
    host: "127.0.0.1",
    port: relayPort,
    secure: false,
    from: FROM,
    fromDomain: "market.example.test",
  });
  workers = createLeadsWorkers({
    sql: workerSql,
    kafka,
    logger: process.env.TEST_LOGS ? createLogger({ service: "leads-outage-test", level: "debug" }) : silentLogger,
    groupPrefix: uniqueName("leads-outage"),
    publicBaseUrl: "https://market.example.test",
    mail: { transport, from: FROM, messageIdDomain: "market.example.test" },
    // Two attempts only: a relay outage that spent attempts would fail every lead at once.
    policy: { maxAttempts: 2, retryBaseMs: 200, claimTimeoutMs: 60_000 },
    sweepIntervalMs: 100,
    firstAttemptGraceMs: 60_000,
    backoff: { initialMs: 100, maxMs: 1000 },
    outageBackoff: { baseMs: 100, maxMs: 500 },
    outageMetrics: { waited: (d) => void waits.push(d), waiting: () => {} },
    partnerIds: () => partnerIds,
  });
  await workers.start();
});

afterAll(async () => {
  await workers?.stop();
  transport?.close();
  for (const s of sinks) await s.stop();
  await workerSql?.end({ timeout: 5 });
  await pgProxy?.close();
  await api?.stop();
});

async function newListing(recipient: string): Promise<{ partner: Partner; listingId: number }> {
  const partner = await api.createPartner({ leadTracking: true });
  partnerIds.push(partner.partnerId);
  const brokerId = uniqueName("broker");
  expect(
    (await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker({ forwardingEmail: recipient }))).status,
  ).toBe(201);
  const res = await partner.put(`/partner/v1/listings/${uniqueName("listing")}`, sample.listing(brokerId));
  expect(res.status).toBe(201);
  return { partner, listingId: res.body.serviceListingId };
}

async function submitLead(listingId: number): Promise<string> {
  const res = await call(api.marketplaceUrl, "POST", `/v1/listings/${listingId}/leads`, {
    body: { name: "Ann Buyer", email: "ann.buyer@example.com", message: "Still available?" },
  });
  expect(res.status).toBe(202);
  return res.body.leadId;
}

const delivery = async (leadId: string) =>
  (
    await api.sql<{ state: string; attempts: number; lastError: string | null }[]>`
    SELECT delivery_state AS state, delivery_attempts AS attempts, delivery_last_error AS "lastError" FROM leads WHERE id = ${leadId}`
  )[0]!;

async function until<T>(what: string, check: () => Promise<T | null | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

test("with our SMTP relay down, leads are postponed without spending attempts and each is e-mailed exactly once when it is back", async () => {
  // The relay is down from the start: nothing listens on its port.
  const leads: string[] = [];
  for (let i = 0; i < 3; i++)
    leads.push(await submitLead((await newListing(`${uniqueName("crm")}@crm.example.com`)).listingId));

  // Many refusals (more than the two attempts a lead has), and still no lead failed or spent an attempt.
  await until(
    "the relay to be tried again and again",
    async () => waits.filter((d) => d === "smtp").length >= 3 * leads.length,
    20_000,
  );
  for (const id of leads) {
    const d = await delivery(id);
    expect(["pending", "sending"]).toContain(d.state);
    if (d.state === "pending") expect(d.attempts).toBe(0);
    expect(d.lastError ?? "").toStartWith("our mail relay is unavailable");
  }

  await startRelay();
  for (const id of leads) {
    const sent = await until(`lead ${id} sent`, async () =>
      (await delivery(id)).state === "sent" ? delivery(id) : null,
    );
    expect(sent).toMatchObject({ state: "sent", attempts: 1, lastError: null });
  }
  await Bun.sleep(1000);
  for (const id of leads) expect(received(id)).toHaveLength(1);
}, 60_000);

test("with our PostgreSQL unreachable right after a send, the 'sent' mark waits for it: one e-mail, one attempt", async () => {
  if (sinks.length === 0) await startRelay();
  const leadId = await submitLead((await newListing(`hold-${uniqueName("crm")}@crm.example.com`)).listingId);
  // The relay holds its answer to RCPT TO; meanwhile our database goes away; then the relay accepts the e-mail.
  await until("the relay to hold the lead's recipient", async () => rcptsHeld > 0);
  await pgProxy.close();
  releaseHeld();
  await until("the e-mail", async () => received(leadId).length > 0);
  // Longer than the old bounded re-tries of the 'sent' mark (about 3 s).
  await Bun.sleep(6_000);
  expect(waits).toContain("postgres");
  await pgProxy.open();
  const sent = await until(
    "the lead marked sent",
    async () => ((await delivery(leadId)).state === "sent" ? delivery(leadId) : null),
    10_000,
  );
  expect(sent).toMatchObject({ state: "sent", attempts: 1, lastError: null });
  await Bun.sleep(1000);
  expect(received(leadId)).toHaveLength(1);
  held = new Promise<void>((resolve) => (releaseHeld = resolve));
}, 60_000);
