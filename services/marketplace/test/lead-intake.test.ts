// POST /v1/listings/{serviceListingId}/leads: public buyer inquiries, against the real PostgreSQL, Redis and Kafka.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { BUYER_VISIBLE_STATUSES, LISTING_STATUSES, Topics } from "@pss/contracts";
import { createLogger } from "@pss/service-kit";
import { uniqueName, withinOneRateWindow } from "../../../test/support/env.ts";
import { eventsOnTopic, waitForOutboxDrained } from "../../api/test/support/events.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { startMarketplace } from "./support/marketplace-harness.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let api: ApiHarness;
let partner: Partner;
let brokerExternalId: string;
const listingIds = new Map<string, number>();

const buyer = (overrides: Record<string, unknown> = {}) => ({
  name: "Ann Buyer",
  email: "ann.buyer@example.com",
  phone: "+1 512 555 0199",
  message: "Is the lease renewable? We could close within 60 days.",
  ...overrides,
});
const submit = (baseUrl: string, listingId: number | string, body: unknown, headers: Record<string, string> = {}) =>
  call(baseUrl, "POST", `/v1/listings/${listingId}/leads`, { body, headers });
const leadRows = async (listingId: number) =>
  (await api.sql`SELECT count(*)::int AS n FROM leads WHERE listing_id = ${listingId}`)[0]!.n as number;
const outboxRowsFor = async (leadId: string) =>
  (await api.sql`SELECT count(*)::int AS n FROM outbox WHERE message_key = ${leadId}`)[0]!.n as number;

async function listing(status: string): Promise<number> {
  const res = await partner.put(
    `/partner/v1/listings/${uniqueName("lead-listing")}`,
    sample.listing(brokerExternalId, { status }),
  );
  expect(res.status).toBe(201);
  return res.body.serviceListingId;
}

beforeAll(async () => {
  api = await startApi();
  partner = await api.createPartner();
  brokerExternalId = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${brokerExternalId}`, sample.broker())).status).toBe(201);
  for (const status of LISTING_STATUSES) listingIds.set(status, await listing(status));
});
afterAll(() => api.stop());

describe("accepting a lead", () => {
  test("a lead on a live listing answers 202 with its ID once it is stored with the listing, broker, office and organization", async () => {
    const listingId = listingIds.get("FOR_SALE")!;
    const res = await submit(api.marketplaceUrl, listingId, buyer());
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ status: "success", leadId: expect.stringMatching(UUID) });
    const [row] = await api.sql`
      SELECT l.*, b.external_id AS broker_external_id FROM leads l JOIN brokers b ON b.id = l.broker_id WHERE l.id = ${res.body.leadId}`;
    expect(row).toMatchObject({
      partner_id: partner.partnerId,
      listing_id: String(listingId),
      broker_external_id: brokerExternalId,
      office_id: partner.officeId,
      organization_id: partner.organizationId,
      buyer_name: "Ann Buyer",
      buyer_email: "ann.buyer@example.com",
      buyer_phone: "+1 512 555 0199",
      message: buyer().message,
      delivery_state: "pending",
      delivery_attempts: 0,
    });
  });

  test("the lead.submitted event is written with the lead and published to Kafka, without the buyer's details", async () => {
    const listingId = listingIds.get("UNDER_CONTRACT")!;
    const { body } = await submit(
      api.marketplaceUrl,
      listingId,
      buyer({ name: "Zed Unique-Name", email: "zed.unique@example.org", message: "secret-message-text" }),
    );
    await waitForOutboxDrained(api.sql, body.leadId);
    const events = await eventsOnTopic(api.kafka, api.sql, Topics.leadEvents.name, body.leadId);
    expect(events).toHaveLength(1);
    const [event] = events;
    const [lead] = await api.sql`SELECT broker_id::text AS broker_id, created_at FROM leads WHERE id = ${body.leadId}`;
    expect(event).toMatchObject({
      type: "lead.submitted",
      aggregateType: "lead",
      aggregateId: body.leadId,
      version: 1,
      partnerId: partner.partnerId,
    });
    expect(event!.payload).toEqual({
      leadId: body.leadId,
      serviceListingId: listingId,
      serviceBrokerId: lead!.broker_id,
      officeId: partner.officeId,
      organizationId: partner.organizationId,
      createdAt: (lead!.created_at as Date).toISOString(),
    });
    expect(JSON.stringify(event)).not.toMatch(/Zed|zed\.unique|secret-message-text/);
  });

  test("every buyer-visible status accepts leads; DRAFT, SOLD and ARCHIVED answer 404 'Listing not found' and store nothing", async () => {
    for (const status of LISTING_STATUSES) {
      const listingId = listingIds.get(status)!;
      const before = await leadRows(listingId);
      const res = await submit(api.marketplaceUrl, listingId, buyer());
      if (BUYER_VISIBLE_STATUSES.includes(status)) {
        expect(res.status).toBe(202);
        expect(await leadRows(listingId)).toBe(before + 1);
      } else {
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ status: "error", error: "Listing not found" });
        expect(await leadRows(listingId)).toBe(before);
      }
    }
  });

  test("a listing that goes back on the market accepts leads again", async () => {
    const externalId = uniqueName("relisted");
    const { body } = await partner.put(
      `/partner/v1/listings/${externalId}`,
      sample.listing(brokerExternalId, { status: "ARCHIVED" }),
    );
    expect((await submit(api.marketplaceUrl, body.serviceListingId, buyer())).status).toBe(404);
    await partner.put(`/partner/v1/listings/${externalId}`, { status: "FOR_SALE" });
    expect((await submit(api.marketplaceUrl, body.serviceListingId, buyer())).status).toBe(202);
  });

  test("an unknown listing is 404; an ID that is not a positive integer is 400", async () => {
    expect(await submit(api.marketplaceUrl, 999_999_999_999, buyer()).then((r) => [r.status, r.body.error])).toEqual([
      404,
      "Listing not found",
    ]);
    for (const id of ["abc", "1.5", "-1", "0", "1e3", "99999999999999999999"]) {
      const res = await submit(api.marketplaceUrl, id, buyer());
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ status: "error", error: "serviceListingId must be a positive integer" });
    }
  });
});

describe("validation", () => {
  const cases: [string, unknown, string][] = [
    ["a missing message", { name: "A", email: "a@example.com" }, "message: is required"],
    ["an unknown field", buyer({ budget: 100 }), "budget: is not a known field"],
    ["an invalid e-mail", buyer({ email: "not-an-email" }), "email: must be a valid e-mail address"],
    [
      "a message over 5000 characters",
      buyer({ message: "x".repeat(5001) }),
      "message: must be at most 5000 characters",
    ],
    ["a name over 200 characters", buyer({ name: "n".repeat(201) }), "name: must be at most 200 characters"],
    ["a blank name", buyer({ name: "   " }), "name: must not be blank"],
    ["a blank message", buyer({ message: " \n " }), "message: must not be blank"],
    ["an invalid phone", buyer({ phone: "call me" }), "phone: is not valid"],
  ];
  for (const [what, body, error] of cases) {
    test(`${what} is a 400 naming the field, and nothing is stored`, async () => {
      const listingId = listingIds.get("FOR_SALE")!;
      const before = await leadRows(listingId);
      const res = await submit(api.marketplaceUrl, listingId, body);
      expect(res.status).toBe(400);
      expect(res.body.status).toBe("error");
      expect(res.body.error).toStartWith(error);
      expect(await leadRows(listingId)).toBe(before);
    });
  }

  test("a body that is not JSON is 415 or 400, never a 500", async () => {
    const listingId = listingIds.get("FOR_SALE")!;
    const form = await call(api.marketplaceUrl, "POST", `/v1/listings/${listingId}/leads`, {
      body: "name=a",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect([form.status, form.body.status]).toEqual([415, "error"]);
    const broken = await call(api.marketplaceUrl, "POST", `/v1/listings/${listingId}/leads`, { body: "{not json" });
    expect(broken.status).toBe(400);
    expect(broken.body).toEqual({ status: "error", error: "Request body is not valid JSON" });
  });
});

describe("honeypot", () => {
  test("a filled 'website' field gets a normal-looking 202 with a lead ID, but nothing is stored or announced", async () => {
    const listingId = listingIds.get("FOR_SALE")!;
    const before = await leadRows(listingId);
    const res = await submit(api.marketplaceUrl, listingId, buyer({ website: "http://spam.example" }));
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ status: "success", leadId: expect.stringMatching(UUID) });
    expect(await leadRows(listingId)).toBe(before);
    expect(await outboxRowsFor(res.body.leadId)).toBe(0);
  });

  test("an empty 'website' field is what people send: the lead is stored", async () => {
    const res = await submit(api.marketplaceUrl, listingIds.get("FOR_SALE")!, buyer({ website: "" }));
    expect(res.status).toBe(202);
    expect(await outboxRowsFor(res.body.leadId)).toBe(1);
  });
});

describe("abuse limits", () => {
  // Each test fills an hourly window and expects the next inquiry refused: never across a window's end.
  beforeEach(() => withinOneRateWindow(3600));
  test("per client address: over the limit is 429 with Retry-After, stores nothing; another address is unaffected", async () => {
    const app = await startMarketplace(api, { leadLimits: { perAddress: 2 }, trustProxy: true });
    try {
      const listingId = listingIds.get("FOR_SALE")!;
      const from = (address: string) => submit(app.baseUrl, listingId, buyer(), { "x-forwarded-for": address });
      expect((await from("198.51.100.20")).status).toBe(202);
      expect((await from("203.0.113.1, 198.51.100.20")).status).toBe(202);
      const before = await leadRows(listingId);
      const refused = await from("198.51.100.20");
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ status: "error", error: "Too many requests" });
      const retryAfter = Number(refused.headers.get("retry-after"));
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 3600).toBe(true);
      expect(await leadRows(listingId)).toBe(before);
      expect((await from("198.51.100.21")).status).toBe(202);
      // One IPv6 /64 is one subscriber.
      expect((await from("2001:db8:1:2::1")).status).toBe(202);
      expect((await from("2001:db8:1:2::2")).status).toBe(202);
      expect((await from("2001:db8:1:2:aaaa::3")).status).toBe(429);
    } finally {
      await app.stop();
    }
  });

  test("without a trusted proxy, X-Forwarded-For cannot be used to dodge the limit", async () => {
    const app = await startMarketplace(api, { leadLimits: { perAddress: 1 } });
    try {
      const listingId = listingIds.get("FOR_SALE")!;
      expect((await submit(app.baseUrl, listingId, buyer(), { "x-forwarded-for": "192.0.2.1" })).status).toBe(202);
      expect((await submit(app.baseUrl, listingId, buyer(), { "x-forwarded-for": "192.0.2.2" })).status).toBe(429);
    } finally {
      await app.stop();
    }
  });

  test("per listing and address: one buyer's inquiries to one listing are capped; its other listings and other buyers are unaffected", async () => {
    const app = await startMarketplace(api, { leadLimits: { perListingAddress: 2 }, trustProxy: true });
    try {
      const target = await listing("FOR_SALE");
      const other = await listing("FOR_SALE");
      const from = (id: number, address: string) => submit(app.baseUrl, id, buyer(), { "x-forwarded-for": address });
      expect((await from(target, "192.0.2.10")).status).toBe(202);
      expect((await from(target, "192.0.2.10")).status).toBe(202);
      const refused = await from(target, "192.0.2.10");
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).not.toBeNull();
      expect(await leadRows(target)).toBe(2);
      expect((await from(other, "192.0.2.10")).status).toBe(202);
      expect((await from(target, "192.0.2.11")).status).toBe(202);
    } finally {
      await app.stop();
    }
  });

  test("a listing's owner probing it from several addresses learns nothing of other buyers' inquiries to it", async () => {
    // Issue 37, item 15: with a per-listing count, "60 minus those accepted" was what others sent in the hour.
    const app = await startMarketplace(api, {
      leadLimits: { perAddress: 20, perListingAddress: 3, global: 10_000 },
      trustProxy: true,
    });
    try {
      const quiet = await listing("FOR_SALE");
      const busy = await listing("FOR_SALE");
      const tag = Math.floor(Math.random() * 200) + 1;
      // Other buyers: 25 inquiries to the busy listing from 25 addresses.
      for (let i = 0; i < 25; i++)
        expect((await submit(app.baseUrl, busy, buyer(), { "x-forwarded-for": `198.18.${tag}.${i + 1}` })).status).toBe(
          202,
        );
      // The owner probes each listing from its own four addresses, five inquiries each: what it sees is the same.
      const probe = async (id: number, net: number) => {
        const seen: string[] = [];
        for (let a = 1; a <= 4; a++)
          for (let n = 0; n < 5; n++) {
            const res = await submit(app.baseUrl, id, buyer(), { "x-forwarded-for": `198.19.${net}.${tag + a}` });
            seen.push(`${res.status} ${JSON.stringify(res.body.error ?? null)}`);
          }
        return seen;
      };
      const onQuiet = await probe(quiet, 1);
      const onBusy = await probe(busy, 2);
      expect(onBusy).toEqual(onQuiet);
      expect(onQuiet.filter((s) => s.startsWith("202")).length).toBe(12);
    } finally {
      await app.stop();
    }
  });

  test("the site-wide limit answers every listing alike once everyone's inquiries reach it", async () => {
    const app = await startMarketplace(api, { leadLimits: { global: 3 }, trustProxy: true });
    try {
      const ids = [await listing("FOR_SALE"), await listing("FOR_SALE")];
      const answers = [];
      for (let i = 0; i < 5; i++) {
        const res = await submit(app.baseUrl, ids[i % 2]!, buyer(), { "x-forwarded-for": `192.0.2.${100 + i}` });
        answers.push({ status: res.status, body: res.status === 202 ? null : res.body });
      }
      expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 429, 429]);
      expect(answers[3]!.body).toEqual(answers[4]!.body);
    } finally {
      await app.stop();
    }
  });
});

test("logs name the lead and listing but never the buyer's name, e-mail, phone or message", async () => {
  const lines: string[] = [];
  const logger = createLogger({ service: "api-test", level: "debug", write: (line) => lines.push(line) });
  const app = await startMarketplace(api, { leadLimits: { perAddress: 1 }, trustProxy: true, logger });
  try {
    const listingId = listingIds.get("FOR_SALE")!;
    const secret = buyer({
      name: "Quentin Privacy",
      email: "quentin.private@example.net",
      phone: "+44 20 7946 0999",
      message: "my-confidential-question",
    });
    const accepted = await submit(app.baseUrl, listingId, secret, { "x-forwarded-for": "192.0.2.77" });
    await submit(app.baseUrl, listingId, secret, { "x-forwarded-for": "192.0.2.77" });
    await submit(app.baseUrl, listingId, { ...secret, website: "x" }, { "x-forwarded-for": "192.0.2.78" });
    const log = lines.join("\n");
    expect(log).toContain(accepted.body.leadId);
    expect(log).toContain("lead refused: rate limit");
    expect(log).toContain("lead discarded: honeypot filled");
    expect(log).not.toMatch(/Quentin|quentin\.private|7946 0999|my-confidential-question/);
  } finally {
    await app.stop();
  }
});
