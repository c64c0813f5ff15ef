// Every event type end to end, each service real and in-process on the real servers: a partner's writes go
// through the API and its outbox relay to Kafka; the indexer, media and leads services record what happened and
// write the facts to the outbox; the relay publishes them; the webhooks service turns them into signed deliveries
// to a real receiver on loopback (WEBHOOK_ALLOWED_HOSTS, test only). Every request is verified with the
// standardwebhooks package. Each payload carries its record's version; none carries buyer data.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Kafka, logLevel } from "kafkajs";
import { Value } from "@sinclair/typebox/value";
import { ListingPublished, Topics, WEBHOOK_EVENT_DATA, type DeliveredEventType } from "@pss/contracts";
import { partnerFactRow, silentLogger } from "@pss/service-kit";
import { createPartnerAdmin } from "../../api/src/admin/partner-admin.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import {
  deleteSearchIndex,
  rawDocument,
  startIndexer,
  type IndexerHarness,
} from "../../indexer/test/support/indexer-harness.ts";
import { createLeadsWorkers } from "../../leads/src/leads-workers.ts";
import { startImageServer, type ImageServer } from "../../media/test/support/image-server.ts";
import { startMedia, type MediaHarness } from "../../media/test/support/media-harness.ts";
import { startGroupAtEnd } from "../../../test/support/consumer-groups.ts";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import { startReceiver, verified, type ReceivedRequest, type Receiver } from "./support/receiver.ts";
import { startWebhooks, until, type WebhooksHarness } from "./support/webhooks-harness.ts";

let api: ApiHarness;
let receiver: Receiver;
let images: ImageServer;
let indexer: IndexerHarness;
let media: MediaHarness;
let leads: ReturnType<typeof createLeadsWorkers>;
let webhooks: WebhooksHarness;
let partner: Partner;
const partners = new Set<string>();
const endpointId = uniqueName("crm");
const path = `/hooks/${endpointId}`;
let secret = "";

/** The number the change feed (GET /partner/v1/events) gives the event of this type and version: the webhook's data.sequence must be it. */
async function feedNumber(type: string, data: Record<string, any>): Promise<number> {
  const page = await call(api.baseUrl, "GET", "/partner/v1/events?limit=1000", { key: partner.apiKey });
  const found = (page.body.results as { sequence: number; type: string; version: number }[]).filter(
    (e) => e.type === type && e.version === data.version,
  );
  expect(found).toHaveLength(1);
  return found[0]!.sequence;
}

beforeAll(async () => {
  receiver = startReceiver();
  images = await startImageServer();
  // Buyer pages and event URLs on the marketplace's own address, so a test can open the URL an event names.
  const marketplacePort = await freePort();
  api = await startApi({ marketplacePort, publicBaseUrl: `http://127.0.0.1:${marketplacePort}` });
  partner = await api.createPartner({ leadTracking: true });
  partners.add(partner.partnerId);
  const kafka = new Kafka({
    clientId: uniqueName("webhooks-events-test"),
    brokers: testUrls().KAFKA_BROKERS.split(","),
    logLevel: logLevel.NOTHING,
  });
  const leadsGroup = uniqueName("webhooks-events-leads");
  await startGroupAtEnd(kafka, `${leadsGroup}-counter`, [Topics.leadEvents.name]);
  [indexer, media, webhooks] = await Promise.all([
    startIndexer({ onlyPartners: partners }),
    startMedia({ partners, env: { MEDIA_ALLOWED_HOSTS: `127.0.0.1:${images.port}` } }),
    startWebhooks({ allowedHosts: [receiver.hostPort], publicBaseUrl: api.marketplaceUrl, partners }),
  ]);
  leads = createLeadsWorkers({
    sql: api.sql,
    kafka,
    logger: silentLogger,
    groupPrefix: leadsGroup,
    publicBaseUrl: api.marketplaceUrl,
    mail: null,
    policy: { maxAttempts: 1, retryBaseMs: 1000, claimTimeoutMs: 60_000 },
    sweepIntervalMs: 60_000,
    firstAttemptGraceMs: 60_000,
    backoff: { initialMs: 100, maxMs: 1000 },
    partnerIds: () => [...partners],
  });
  await leads.start();
  const res = await partner.put(`/partner/v1/webhook-endpoints/${endpointId}`, {
    url: receiver.url(path),
    events: [
      "listing.published",
      "listing.unpublished",
      "listing.media.processed",
      "broker.avatar.processed",
      "lead.received",
    ],
  });
  expect(res.status).toBe(201);
  secret = res.body.secret;
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([webhooks?.stop(), leads?.stop(), media?.stop(), indexer?.stop()]);
  if (indexer) await deleteSearchIndex(indexer.alias);
  images?.stop();
  receiver?.stop();
  if (api) {
    await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ${partner.partnerId}::uuid`;
    await api.stop();
  }
}, 60_000);

async function freePort(): Promise<number> {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

/** The verified bodies of every request so far, with the request. */
const events = () => receiver.requests(path).map((request) => ({ request, body: verified(request, secret) }));

/** Waits for an event of `type` that `match` accepts; returns it with its request. */
function eventually(
  type: string,
  match: (data: Record<string, any>) => boolean = () => true,
  timeoutMs = 60_000,
): Promise<{ request: ReceivedRequest; body: ReturnType<typeof verified> }> {
  return until(
    `${type} delivered`,
    () => events().find((e) => e.body.type === type && match(e.body.data)) ?? null,
    timeoutMs,
  );
}

/** The office's lead count as recorded now (a database other runs wrote to may hold counts for this office ID). */
async function officeCount(officeId: number): Promise<number> {
  const [row] =
    await api.sql`SELECT COALESCE(sum(lead_count), 0)::int AS n FROM lead_count_buckets WHERE office_id = ${officeId} AND granularity = 'month'`;
  return row!.n;
}

const buyer = {
  name: "Ann Buyer",
  email: "ann.buyer-webhooks@example.com",
  phone: "+1 512 555 0199",
  message: "Is the lease renewable? Cash buyer.",
};

test("a partner's broker, listing and lead produce every event, each signed, with IDs, URLs and the record's version and no buyer data", async () => {
  const brokerExternalId = uniqueName("broker");
  const broker = await partner.put(
    `/partner/v1/brokers/${brokerExternalId}`,
    sample.broker({ avatarUrl: images.url("/avatar.jpg") }),
  );
  expect(broker.status).toBe(201);
  const listingExternalId = uniqueName("listing");
  const listing = await partner.put(
    `/partner/v1/listings/${listingExternalId}`,
    sample.listing(brokerExternalId, {
      photos: [
        { url: images.url("/photo.jpg"), sortKey: 1 },
        { url: images.url("/missing.jpg"), sortKey: 2 },
      ],
    }),
  );
  expect(listing.status).toBe(201);
  const serviceListingId: number = listing.body.serviceListingId;
  const serviceBrokerId = String(broker.body.serviceBrokerId);
  const listingUrl: string = listing.body.serviceListingUrl;
  // The URLs in events are the ones the API answers partners with.
  const brokerIds = {
    externalBrokerId: brokerExternalId,
    serviceBrokerId,
    serviceProfileUrl: broker.body.serviceProfileUrl,
  };
  const listingIds = { externalListingId: listingExternalId, serviceListingId, serviceListingUrl: listingUrl };

  // broker.avatar.processed: the avatar's outcome.
  const avatar = await eventually("broker.avatar.processed", (d) => d.externalBrokerId === brokerExternalId);
  expect(avatar.body.data).toEqual({
    ...brokerIds,
    version: expect.any(Number),
    sequence: await feedNumber("broker.avatar.processed", avatar.body.data),
    avatar: {
      url: images.url("/avatar.jpg"),
      state: "ready",
      failureReason: null,
      warning: null,
      width: 1000,
      height: 800,
    },
  });

  // listing.published: visible to buyers, indexed, and its URL answers.
  const published = await eventually("listing.published", (d) => d.externalListingId === listingExternalId);
  expect(published.body.data).toEqual({
    ...listingIds,
    ...brokerIds,
    status: "FOR_SALE",
    version: expect.any(Number),
    sequence: await feedNumber("listing.published", published.body.data),
  });
  expect((await fetch(listingUrl)).status).toBe(200);
  expect(await rawDocument(indexer.opensearch, indexer.alias, serviceListingId)).not.toBeNull();

  // listing.media.processed: every photo settled, with the reason of the one that failed.
  const processed = await eventually("listing.media.processed", (d) => d.externalListingId === listingExternalId);
  expect(processed.body.data).toMatchObject({
    ...listingIds,
    version: expect.any(Number),
    ready: 1,
    failed: 1,
    sequence: await feedNumber("listing.media.processed", processed.body.data),
  });
  expect(processed.body.data.photos.map((p: Record<string, unknown>) => [p.sortKey, p.state])).toEqual([
    [1, "ready"],
    [2, "failed"],
  ]);
  expect(processed.body.data.photos[1].failureReason).toContain("404");

  // lead.received: the listing's IDs and the office's new count, nothing about the buyer.
  const countBefore = await officeCount(partner.officeId);
  const lead = await call(api.marketplaceUrl, "POST", `/v1/listings/${serviceListingId}/leads`, { body: buyer });
  expect(lead.status).toBe(202);
  const received = await eventually("lead.received", (d) => d.externalListingId === listingExternalId);
  expect(received.body.data).toEqual({
    ...listingIds,
    ...brokerIds,
    officeId: partner.officeId,
    officeLeadCount: countBefore + 1,
    version: countBefore + 1,
    sequence: await feedNumber("lead.received", received.body.data),
  });
  for (const secretWord of [buyer.name, buyer.email, buyer.phone, buyer.message, lead.body.leadId])
    expect(received.request.body).not.toContain(secretWord);

  // listing.unpublished: the status left the visible set; a higher version than the published one.
  const sold = await partner.put(`/partner/v1/listings/${listingExternalId}`, { status: "SOLD" });
  expect(sold.status).toBe(200);
  const unpublished = await eventually("listing.unpublished", (d) => d.externalListingId === listingExternalId);
  expect(unpublished.body.data).toEqual({
    ...listingIds,
    ...brokerIds,
    status: "SOLD",
    version: expect.any(Number),
    sequence: await feedNumber("listing.unpublished", unpublished.body.data),
  });
  expect(unpublished.body.data.version).toBeGreaterThan(published.body.data.version);

  // ping, whatever the subscription.
  const pinged = await call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${endpointId}/test`, {
    key: partner.apiKey,
  });
  expect(pinged.status).toBe(202);
  const ping = await eventually("ping");
  expect(ping.request.headers["webhook-id"]).toBe(pinged.body.deliveryId);
  expect(ping.body.data).toEqual({ endpointId, version: 1 });

  // Each event once (at least once may repeat, but then with its webhook-id), each with a well-formed timestamp and
  // exactly the data the OpenAPI document's `webhooks` section describes for its type.
  const all = events();
  const byId = new Map<string, string>();
  for (const e of all) {
    expect(Number.isNaN(Date.parse(e.body.timestamp))).toBe(false);
    expect([
      e.body.type,
      [...Value.Errors(WEBHOOK_EVENT_DATA[e.body.type as DeliveredEventType].data, e.body.data)].map(
        (err) => `${err.path}: ${err.message}`,
      ),
    ]).toEqual([e.body.type, []]);
    const id = e.request.headers["webhook-id"]!;
    if (byId.has(id)) expect(e.request.body).toBe(byId.get(id)!);
    byId.set(id, e.request.body);
  }
  expect(new Set(all.map((e) => e.body.type))).toEqual(
    new Set([
      "broker.avatar.processed",
      "listing.published",
      "listing.media.processed",
      "lead.received",
      "listing.unpublished",
      "ping",
    ]),
  );
  // The deliveries list agrees: every one delivered (the worker records a 2xx just after the receiver has it).
  const deliveries = () =>
    call(api.baseUrl, "GET", `/partner/v1/webhook-deliveries?endpointId=${endpointId}`, { key: partner.apiKey });
  await until(
    "every delivery recorded as delivered",
    async () =>
      (await deliveries()).body.results.every((d: { status: string }) => d.status === "delivered") ? true : null,
    10_000,
  );
  const list = await deliveries();
  expect(list.body.results.map((d: { status: string }) => d.status)).toEqual(list.body.results.map(() => "delivered"));
  expect(new Set(list.body.results.map((d: { deliveryId: string }) => d.deliveryId))).toEqual(new Set(byId.keys()));
}, 150_000);

test("replay: an endpoint created after the events gets them, with the bodies the first endpoint got", async () => {
  const late = uniqueName("late");
  const latePath = `/hooks/${late}`;
  const created = await partner.put(`/partner/v1/webhook-endpoints/${late}`, {
    url: receiver.url(latePath),
    events: ["listing.published", "listing.unpublished", "lead.received"],
  });
  expect(created.status).toBe(201);
  const lateSecret = created.body.secret as string;
  const originals = events().filter((e) =>
    ["listing.published", "listing.unpublished", "lead.received"].includes(e.body.type),
  );
  expect(originals.length).toBeGreaterThanOrEqual(3);
  const throughSequence = Math.max(...originals.map((e) => e.body.data.sequence as number));

  const replay = await call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${late}/replay`, {
    key: partner.apiKey,
    body: { afterSequence: 0, throughSequence },
  });
  expect(replay.status).toBe(202);
  expect(replay.body.queued).toBe(originals.length);
  const got = await until("replayed events", () => {
    const bodies = receiver.requests(latePath).map((r) => ({ request: r, body: verified(r, lateSecret) }));
    return bodies.length >= originals.length ? bodies : null;
  });
  // The same bodies (data.sequence included), signed with the new endpoint's secret, in sequence order as queued.
  expect(new Set(got.map((e) => e.request.body))).toEqual(new Set(originals.map((e) => e.request.body)));

  // A time range, a disabled endpoint, an unknown one, an empty range.
  expect(
    (
      await call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${late}/replay`, {
        key: partner.apiKey,
        body: { since: new Date(Date.now() + 60_000).toISOString() },
      })
    ).body,
  ).toEqual({ status: "success", queued: 0 });
  // Bounds before anything we store (year 0 in UTC after the offset) mean "from the beginning": 202, never a 500.
  expect(
    (
      await call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${late}/replay`, {
        key: partner.apiKey,
        body: { since: "0001-01-01T00:00:00+01:32", until: "1960-01-01T00:00:00Z" },
      })
    ).body,
  ).toEqual({ status: "success", queued: 0 });
  expect(
    (await call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${late}/replay`, { key: partner.apiKey, body: {} }))
      .status,
  ).toBe(400);
  expect(
    (
      await call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${late}/replay`, {
        key: partner.apiKey,
        body: { afterSequence: 5, throughSequence: 5 },
      })
    ).status,
  ).toBe(400);
  expect(
    (
      await call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${uniqueName("none")}/replay`, {
        key: partner.apiKey,
        body: { afterSequence: 0 },
      })
    ).status,
  ).toBe(404);
  await partner.put(`/partner/v1/webhook-endpoints/${late}`, { enabled: false });
  expect(
    (
      await call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${late}/replay`, {
        key: partner.apiKey,
        body: { afterSequence: 0 },
      })
    ).status,
  ).toBe(409);
}, 120_000);

test("an endpoint gets only the events it subscribed to", async () => {
  const onlyLeads = uniqueName("leads-only");
  const onlyLeadsPath = `/hooks/${onlyLeads}`;
  const res = await partner.put(`/partner/v1/webhook-endpoints/${onlyLeads}`, {
    url: receiver.url(onlyLeadsPath),
    events: ["lead.received"],
  });
  expect(res.status).toBe(201);
  const brokerExternalId = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${brokerExternalId}`, sample.broker())).status).toBe(201);
  const listingExternalId = uniqueName("listing");
  const listing = await partner.put(
    `/partner/v1/listings/${listingExternalId}`,
    sample.listing(brokerExternalId, { photos: [] }),
  );
  await eventually("listing.published", (d) => d.externalListingId === listingExternalId);
  const countBefore = await officeCount(partner.officeId);
  expect(
    (await call(api.marketplaceUrl, "POST", `/v1/listings/${listing.body.serviceListingId}/leads`, { body: buyer }))
      .status,
  ).toBe(202);
  await eventually("lead.received", (d) => d.externalListingId === listingExternalId);
  const got = await until("the lead on the leads-only endpoint", () => {
    const r = receiver.requests(onlyLeadsPath);
    return r.length > 0 ? r : null;
  });
  // The other endpoint got the publication and the lead; this one only the lead (the office's next count). A fact's
  // deliveries to all endpoints are created together, so the list is complete once the lead arrived there.
  const list = await call(api.baseUrl, "GET", `/partner/v1/webhook-deliveries?endpointId=${onlyLeads}`, {
    key: partner.apiKey,
  });
  expect(list.body.results.map((d: { eventType: string }) => d.eventType)).toEqual(["lead.received"]);
  expect(receiver.requests(onlyLeadsPath).map((r) => verified(r, res.body.secret).type)).toEqual(["lead.received"]);
  expect(verified(got[0]!, res.body.secret).data.officeLeadCount).toBe(countBefore + 1);
}, 90_000);

test("an endpoint made by a key without lead tracking gets the numbering that key reads: no hole where a lead was", async () => {
  const keyB = (
    await createPartnerAdmin({ sql: api.sql, redis: api.redis }).createKey({
      partnerId: partner.partnerId,
      leadTracking: false,
    })
  ).apiKey;
  const bId = uniqueName("no-leads");
  const bPath = `/hooks/${bId}`;
  const made = await call(api.baseUrl, "PUT", `/partner/v1/webhook-endpoints/${bId}`, {
    key: keyB,
    body: { url: receiver.url(bPath), events: ["listing.published", "listing.unpublished"] },
  });
  expect(made.status).toBe(201);
  const atB = (type: string, externalListingId: string) =>
    until(`${type} at the endpoint without lead data`, () => {
      const found = receiver
        .requests(bPath)
        .map((r) => verified(r, made.body.secret))
        .find((e) => e.type === type && e.data.externalListingId === externalListingId);
      return found ?? null;
    });
  const brokerExternalId = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${brokerExternalId}`, sample.broker())).status).toBe(201);
  const listingExternalId = uniqueName("listing");
  const listing = await partner.put(
    `/partner/v1/listings/${listingExternalId}`,
    sample.listing(brokerExternalId, { photos: [] }),
  );
  expect(listing.status).toBe(201);
  const published = await atB("listing.published", listingExternalId);
  // Three leads between the publication and the next change.
  for (let i = 0; i < 3; i++)
    expect(
      (
        await call(api.marketplaceUrl, "POST", `/v1/listings/${listing.body.serviceListingId}/leads`, {
          body: { ...buyer, email: `ann.buyer-${i}-numbering@example.com` },
        })
      ).status,
    ).toBe(202);
  await until("three lead.received at the lead-data endpoint", () => {
    const leads = events().filter(
      (e) => e.body.type === "lead.received" && e.body.data.externalListingId === listingExternalId,
    );
    return leads.length >= 3 ? leads : null;
  });
  const sold = await call(api.baseUrl, "PUT", `/partner/v1/listings/${listingExternalId}`, {
    key: keyB,
    body: { status: "SOLD" },
  });
  expect(sold.status).toBe(200);
  const unpublished = await atB("listing.unpublished", listingExternalId);

  const feedOf = async (key: string) =>
    (await call(api.baseUrl, "GET", "/partner/v1/events?limit=1000", { key })).body.results as {
      sequence: number;
      type: string;
      version: number;
      data: Record<string, unknown>;
    }[];
  const numberIn = (feed: Awaited<ReturnType<typeof feedOf>>, type: string, data: Record<string, unknown>) =>
    feed.find((e) => e.type === type && e.version === data.version && e.data.externalListingId === listingExternalId)
      ?.sequence;
  // B's feed: 1..n, no lead event; its endpoint's deliveries carry exactly those numbers.
  const feedB = await feedOf(keyB);
  expect(feedB.map((e) => e.sequence)).toEqual(feedB.map((_, i) => i + 1));
  expect(feedB.filter((e) => e.type === "lead.received")).toEqual([]);
  expect(published.data.sequence).toBe(numberIn(feedB, "listing.published", published.data));
  expect(unpublished.data.sequence).toBe(numberIn(feedB, "listing.unpublished", unpublished.data));
  // The endpoint that carries lead data got the same events with the numbering of keys with lead tracking, in
  // which the three leads lie between them.
  const atA = (type: string) =>
    until(`${type} at the lead-data endpoint`, () => {
      const found = events().find((e) => e.body.type === type && e.body.data.externalListingId === listingExternalId);
      return found ?? null;
    });
  const [publishedA, unpublishedA] = [await atA("listing.published"), await atA("listing.unpublished")];
  const feedA = await feedOf(partner.apiKey);
  expect(publishedA.body.data.sequence).toBe(numberIn(feedA, "listing.published", publishedA.body.data));
  expect(unpublishedA.body.data.sequence).toBe(numberIn(feedA, "listing.unpublished", unpublishedA.body.data));
  expect(
    unpublishedA.body.data.sequence -
      publishedA.body.data.sequence -
      (unpublished.data.sequence - published.data.sequence),
  ).toBeGreaterThanOrEqual(3);

  // Replay to a new endpoint of B: the range counts in B's numbering, and the bodies carry it.
  const lateId = uniqueName("no-leads-late");
  const latePath = `/hooks/${lateId}`;
  const late = await call(api.baseUrl, "PUT", `/partner/v1/webhook-endpoints/${lateId}`, {
    key: keyB,
    body: { url: receiver.url(latePath), events: ["listing.published", "listing.unpublished"] },
  });
  expect(late.status).toBe(201);
  const replay = await call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${lateId}/replay`, {
    key: keyB,
    body: { afterSequence: published.data.sequence - 1, throughSequence: unpublished.data.sequence },
  });
  expect(replay.body).toEqual({ status: "success", queued: 2 });
  const replayed = await until("the replayed events", () => {
    const got = receiver.requests(latePath).map((r) => verified(r, late.body.secret));
    return got.length >= 2 ? got : null;
  });
  expect(new Set(replayed.map((e) => `${e.type} ${e.data.externalListingId} ${e.data.sequence}`))).toEqual(
    new Set([
      `listing.published ${listingExternalId} ${published.data.sequence}`,
      `listing.unpublished ${listingExternalId} ${unpublished.data.sequence}`,
    ]),
  );
}, 120_000);

test("a fact that will never get a feed number (from before the feed) is delivered at once, without a sequence", async () => {
  const externalListingId = uniqueName("before-feed");
  const fact = partnerFactRow(
    ListingPublished,
    { aggregateId: "987654321", version: 1, partnerId: partner.partnerId, mode: "live" },
    {
      externalListingId,
      serviceListingId: 987654321,
      externalBrokerId: "b",
      serviceBrokerId: "1",
      status: "FOR_SALE",
      version: 1,
    },
  );
  // An outbox row the sequencer never numbers (feed_pending NULL, as every row written before migration 0022).
  await api.sql`
    INSERT INTO outbox (topic, message_key, payload, feed_pending)
    VALUES (${fact.topic}, ${fact.messageKey}, ${api.sql.json(fact.envelope as never)}, NULL)`;
  const started = Date.now();
  const got = await eventually("listing.published", (d) => d.externalListingId === externalListingId, 20_000);
  expect(Date.now() - started).toBeLessThan(10_000);
  expect(got.body.data.sequence).toBeUndefined();
}, 60_000);
