// Two leads instances as real processes (`bun services/leads/src/main.ts`) sharing the partitions of both their
// consumer groups (counter and mailer), against a real SMTP server on loopback: every lead is counted once and
// e-mailed once, a mail server slower than the session timeout included (heartbeats while the handler waits), and
// when one instance is SIGKILLed in the middle of an SMTP exchange the other takes its partitions and, once the
// abandoned claim runs out (LEAD_DELIVERY_CLAIM_TIMEOUT_SECONDS), sends the lead: once.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Topics } from "@pss/contracts";
import { moveGroupToEnd, waitUntil } from "../../api/test/faults/support/fault-harness.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import {
  assignments,
  logLines,
  ownerOf,
  partitionOf,
  startInstances,
  waitForSplit,
  type ServiceProcess,
} from "../../../test/support/consumer-instances.ts";
import { uniqueName } from "../../../test/support/env.ts";
import { startSmtpSink, type SmtpSink } from "./support/smtp-sink.ts";

const TOPIC = Topics.leadEvents.name;
const PARTITIONS = Topics.leadEvents.partitions;
const SESSION_MS = 6_000;
const DOMAIN = "scale.example.test";
const prefix = uniqueName("scale-leads");
const groups = { counter: `${prefix}-counter`, mailer: `${prefix}-mailer` };
const slowAddress = `slow-${uniqueName("broker")}@crm.example.com`;
const stuckAddress = `stuck-${uniqueName("broker")}@crm.example.com`;
const stuck = Promise.withResolvers<void>();
const rcpts = new Map<string, number>();
let api: ApiHarness;
let sink: SmtpSink;
let partner: Partner;
let instances: ServiceProcess[] = [];

beforeAll(async () => {
  sink = await startSmtpSink({
    wait: (address) => {
      rcpts.set(address, (rcpts.get(address) ?? 0) + 1);
      // A slow server: the RCPT answer for this broker takes longer than the session timeout.
      if (address === slowAddress) return Bun.sleep(SESSION_MS + 3_000);
      // A stuck one, until the test lets it go.
      if (address === stuckAddress) return stuck.promise;
      return undefined;
    },
  });
  api = await startApi();
  partner = await api.createPartner({ leadTracking: true });
  await Promise.all([
    moveGroupToEnd(api.kafka, groups.counter, [TOPIC]),
    moveGroupToEnd(api.kafka, groups.mailer, [TOPIC]),
  ]);
  instances = await startInstances("leads", 2, {
    LEADS_GROUP_PREFIX: prefix,
    SMTP_HOST: "127.0.0.1",
    SMTP_PORT: String(sink.port),
    SMTP_FROM: `Leads <leads@${DOMAIN}>`,
    PUBLIC_BASE_URL: "https://market.example.test",
    LEAD_DELIVERY_RETRY_SECONDS: "1",
    // A lead abandoned mid-send by a dead instance is sent by another after 10 s (the sweeper looks every 5 s).
    LEAD_DELIVERY_CLAIM_TIMEOUT_SECONDS: "10",
  });
  await Promise.all([
    waitForSplit(instances, groups.counter, TOPIC, PARTITIONS),
    waitForSplit(instances, groups.mailer, TOPIC, PARTITIONS),
  ]);
}, 150_000);

afterAll(async () => {
  stuck.resolve();
  await Promise.all(instances.map((p) => p.stop()));
  await sink?.stop();
  await api?.stop();
}, 60_000);

async function listingOf(forwardingEmail: string): Promise<number> {
  const brokerId = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker({ forwardingEmail }))).status).toBe(201);
  const res = await partner.put(
    `/partner/v1/listings/${uniqueName("listing")}`,
    sample.listing(brokerId, { photos: [] }),
  );
  expect(res.status).toBe(201);
  return res.body.serviceListingId;
}

async function submitLead(listingId: number): Promise<{ leadId: string; requestId: string }> {
  const requestId = uniqueName("lead-req");
  const res = await call(api.marketplaceUrl, "POST", `/v1/listings/${listingId}/leads`, {
    headers: { "x-request-id": requestId },
    body: { name: "Ann Buyer", email: "ann.buyer@example.com", message: "Is the lease renewable?" },
  });
  expect(res.status).toBe(202);
  return { leadId: res.body.leadId, requestId };
}

const messageId = (leadId: string) => `<lead-${leadId}@${DOMAIN}>`;
const states = async (leadIds: string[]) =>
  (
    await api.sql<
      { id: string; delivery_state: string }[]
    >`SELECT id, delivery_state FROM leads WHERE id = ANY(${leadIds}::uuid[])`
  ).map((r) => r.delivery_state);

/** Waits until every lead was sent, then checks each is in the mail server once and counted once for the office. */
async function expectSentAndCountedOnce(leadIds: string[], timeoutMs: number): Promise<void> {
  await waitUntil(
    `${leadIds.length} leads to be sent`,
    async () => (await states(leadIds)).filter((s) => s === "sent").length === leadIds.length,
    timeoutMs,
  );
  expect(leadIds.map((id) => [id, sink.byMessageId(messageId(id)).length]).filter(([, n]) => n !== 1)).toEqual([]);
  // Counted: one counted row per lead, and the office's day bucket (what the lead-count API sums) holds them all.
  await waitUntil(
    "the leads to be counted",
    async () =>
      (await api.sql`SELECT 1 FROM counted_leads WHERE lead_id = ANY(${leadIds}::uuid[])`).length === leadIds.length,
    timeoutMs,
  );
}

const officeDayCount = async () =>
  Number(
    (
      await api.sql<
        { n: string }[]
      >`SELECT coalesce(sum(lead_count), 0) AS n FROM lead_count_buckets WHERE office_id = ${partner.officeId} AND granularity = 'day'`
    )[0]!.n,
  );

test("two instances share the lead partitions: each lead counted once and e-mailed once, a mail server slower than the session included", async () => {
  const joinsBefore = instances.map((p) => [assignments(p, groups.counter), assignments(p, groups.mailer)]);
  const countedBefore = await officeDayCount();
  const normal = await listingOf(`${uniqueName("crm")}@crm.example.com`);
  const slow = await listingOf(slowAddress);
  const leads = [];
  for (let i = 0; i < 12; i++) leads.push(await submitLead(normal));
  const slowLead = await submitLead(slow);
  const all = [...leads, slowLead].map((l) => l.leadId);

  await expectSentAndCountedOnce(all, 90_000);
  expect(await officeDayCount()).toBe(countedBefore + all.length);
  // Both instances sent some of them.
  const senders = instances.filter((p) => logLines(p, "lead forwarded").some((l) => all.includes(l.leadId)));
  expect(senders).toHaveLength(2);
  // The slow lead's first attempt (by the mailer that owns its partition) lasted longer than the session
  // timeout, in one go; nobody had to join either group again meanwhile.
  expect(rcpts.get(slowAddress)).toBe(1);
  const handled = instances.flatMap((p) =>
    logLines(p, "event handled").filter((l) => l.requestId === slowLead.requestId && l.groupId === groups.mailer),
  );
  expect(handled).toHaveLength(1);
  expect(handled[0]!.durationMs).toBeGreaterThan(SESSION_MS);
  expect(instances.map((p) => [assignments(p, groups.counter), assignments(p, groups.mailer)])).toEqual(joinsBefore);
}, 180_000);

test("SIGKILL of an instance in the middle of an SMTP exchange: the other takes its partitions and sends the lead once", async () => {
  const split = await waitForSplit(instances, groups.mailer, TOPIC, PARTITIONS);
  const countedBefore = await officeDayCount();
  const listing = await listingOf(stuckAddress);
  // Leads until at least one is on each instance's partitions; each one's mailer gets stuck at RCPT TO.
  const leads: string[] = [];
  const owner = (leadId: string) => ownerOf(split, partitionOf(leadId, PARTITIONS));
  for (let i = 0; i < 24 && new Set(leads.map(owner)).size < 2; i++) leads.push((await submitLead(listing)).leadId);
  const victim = owner(leads[0]!);
  const survivor = instances.find((p) => p !== victim)!;
  const onVictim = leads.filter((id) => owner(id) === victim);
  // Both instances are mid-send: a lead of each is claimed ('sending') and two RCPTs are waiting.
  const first = [onVictim[0]!, leads.find((id) => owner(id) === survivor)!];
  await waitUntil(
    "a lead of each instance to be mid-send",
    async () => (await states(first)).every((s) => s === "sending") && (rcpts.get(stuckAddress) ?? 0) >= 2,
    60_000,
  );
  expect(await victim.kill()).not.toBe(0);
  stuck.resolve();
  // New leads after the kill, some on the dead instance's partitions.
  const after: string[] = [];
  const other = await listingOf(`${uniqueName("crm")}@crm.example.com`);
  for (let i = 0; i < 6; i++) after.push((await submitLead(other)).leadId);

  await waitForSplit([survivor], groups.mailer, TOPIC, PARTITIONS, { timeoutMs: 60_000 });
  await waitForSplit([survivor], groups.counter, TOPIC, PARTITIONS, { timeoutMs: 60_000 });
  // The victim's leads wait for their claims to run out (10 s), then the survivor's sweeper sends them.
  await expectSentAndCountedOnce([...leads, ...after], 120_000);
  expect(await officeDayCount()).toBe(countedBefore + leads.length + after.length);
  const sentBySurvivor = new Set(logLines(survivor, "lead forwarded").map((l) => l.leadId as string));
  expect(onVictim.filter((id) => !sentBySurvivor.has(id))).toEqual([]);
  expect(survivor.exitCode()).toBeNull();
}, 240_000);
