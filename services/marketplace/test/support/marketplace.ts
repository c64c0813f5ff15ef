// A small live marketplace for the buyer page tests: the API and the marketplace beside it (relay on, lead limits), the indexer on its own
// alias (so search holds only this run's listings), the media service processing real photos from a local
// image host, the leads workers mailing into a real SMTP sink, and a set of listings in every state.
// The public base URL is http://market.example.test:<port>: the browser resolves that name to the marketplace on
// loopback (launchChromium's hosts), so form posts and redirects take the real network path.
import { Kafka, logLevel } from "kafkajs";
import { silentLogger } from "@pss/service-kit";
import { testUrls, uniqueName } from "../../../../test/support/env.ts";
import {
  deleteSearchIndex,
  indexedState,
  newAlias,
  startIndexer,
  until,
  type IndexerHarness,
} from "../../../indexer/test/support/indexer-harness.ts";
import { makePicture } from "../../../media/test/support/image-server.ts";
import { startMedia, type MediaHarness } from "../../../media/test/support/media-harness.ts";
import { createSmtpTransport } from "../../../leads/src/forwarding/smtp-transport.ts";
import { createLeadsWorkers } from "../../../leads/src/leads-workers.ts";
import { startSmtpSink, type SmtpSink } from "../../../leads/test/support/smtp-sink.ts";
import { sample, startApi, type ApiHarness, type Partner } from "../../../api/test/support/harness.ts";

export const PUBLIC_HOST = "market.example.test";
const FROM = "Marketplace leads <leads@market.example.test>";
export const leadMessageId = (leadId: string) => `<lead-${leadId}@market.example.test>`;
/** Inquiries per client address and hour: enough for the flows, small enough to reach in the limit test. */
export const LEADS_PER_ADDRESS = 12;

export interface MarketListing {
  id: number;
  url: string;
  title: string;
}

export interface Marketplace {
  /** http://market.example.test:<port> */
  base: string;
  api: ApiHarness;
  idx: IndexerHarness;
  sink: SmtpSink;
  /** The partner whose broker takes the inquiries (lead tracking on, photos processed by the media service). */
  partner: Partner;
  broker: { id: string; url: string; name: string; forwardingEmail: string };
  bakery: MarketListing;
  roastery: MarketListing;
  salem: MarketListing;
  /** Other live listings (another partner's), enough for two result pages. */
  fillers: MarketListing[];
  /** Listings buyers must never see: a word found in each one's title and description, and no page else. */
  hiddenMarker: string;
  sold: MarketListing;
  archived: MarketListing;
  draft: MarketListing;
  stop(): Promise<void>;
}

const BAKERY_DESCRIPTION = `A much-loved neighborhood bakery and café on a busy corner, open since 2011.

Sourdough, pastries and wedding cakes, with a loyal morning crowd and steady wholesale orders from three local cafés. The owner is retiring and will stay on for a smooth handover.

Fully equipped kitchen with a deck oven, proofer and walk-in cooler; seating for 28.`;

const FILLERS: [string, string, string, string, number][] = [
  ["Thai restaurant near the waterfront", "Restaurant", "Portland", "OR", 625000],
  ["Specialty coffee bar downtown", "Coffee Shop", "Seattle", "WA", 295000],
  ["Outdoor gear retail store", "Retail", "Bend", "OR", 410000],
  ["Residential landscaping company", "Landscaping", "Eugene", "OR", 350000],
  ["Wholesale bread bakery", "Bakery", "Tacoma", "WA", 780000],
  ["Two-bay auto repair shop", "Auto Repair", "Salem", "OR", 265000],
  ["Boutique fitness studio", "Fitness Studio", "Portland", "OR", 180000],
  ["Mobile pet grooming business", "Pet Grooming", "Vancouver", "WA", 145000],
  ["Craft brewery and taproom", "Brewery", "Hood River", "OR", 1250000],
  ["Florist with event contracts", "Florist", "Spokane", "WA", 120000],
  ["Family pizza restaurant", "Restaurant", "Beaverton", "OR", 340000],
];

export async function startMarketplace(): Promise<Marketplace> {
  const token = Math.random().toString(36).slice(2, 8);
  const images = await startPictureHost();
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  const base = `http://${PUBLIC_HOST}:${port}`;
  const alias = newAlias();
  // The marketplace answers on the public host's port (the browser's pages); the API beside it on any free one.
  const api = await startApi({
    marketplacePort: port,
    publicBaseUrl: base,
    searchAlias: alias,
    leadLimits: { perAddress: LEADS_PER_ADDRESS },
  });
  // The topics carry every test's events (other databases' too): this index takes this run's partners only.
  const indexedPartners = new Set<string>();
  const idx = await startIndexer({ alias, onlyPartners: indexedPartners });
  const partner = await api.createPartner({ leadTracking: true });
  const fillerPartner = await api.createPartner();
  indexedPartners.add(partner.partnerId).add(fillerPartner.partnerId);
  const media: MediaHarness = await startMedia({
    partners: [partner.partnerId],
    env: {
      MEDIA_ALLOWED_HOSTS: `127.0.0.1:${images.port}`,
      MEDIA_RETRY_BASE_MS: "100",
      MEDIA_RETRY_POLL_MS: "50",
      PUBLIC_BASE_URL: base,
    },
  });
  const sink = await startSmtpSink();
  const kafka = new Kafka({
    clientId: uniqueName("buyer-pages"),
    brokers: testUrls().KAFKA_BROKERS.split(","),
    logLevel: logLevel.NOTHING,
  });
  const transport = createSmtpTransport({
    host: "127.0.0.1",
    port: sink.port,
    secure: false,
    from: FROM,
    fromDomain: "market.example.test",
  });
  const workers = createLeadsWorkers({
    sql: api.sql,
    kafka,
    logger: silentLogger,
    groupPrefix: uniqueName("buyer-pages-leads"),
    publicBaseUrl: base,
    mail: { transport, from: FROM, messageIdDomain: "market.example.test" },
    policy: { maxAttempts: 3, retryBaseMs: 200, claimTimeoutMs: 60_000 },
    sweepIntervalMs: 200,
    firstAttemptGraceMs: 60_000,
    backoff: { initialMs: 100, maxMs: 1000 },
    // This database and topic are shared with other tests: only this partner's leads.
    partnerIds: () => [partner.partnerId],
  });
  await workers.start();

  const brokerExternalId = uniqueName("broker");
  const forwardingEmail = `${uniqueName("crm")}@crm.example.com`;
  const brokerPut = await partner.put(
    `/partner/v1/brokers/${brokerExternalId}`,
    sample.broker({
      name: "Maria Alvarez",
      email: `${uniqueName("maria")}@brokerage.example.com`,
      forwardingEmail,
      avatarUrl: images.url("/maria.jpg"),
      profile: {
        bio: "Fifteen years helping owners across Oregon and Washington sell bakeries, cafés and restaurants.\n\nCall me at 503-555-0142.",
        website: "https://maria.example.com",
      },
      licenses: [{ licenseNumber: "OR-201544", state: "OR", country: "US" }],
      serviceAreas: [
        { city: "Portland", state: "OR", country: "US" },
        { county: "Multnomah", state: "OR", country: "US" },
        { state: "WA", country: "US" },
      ],
    }),
  );
  if (brokerPut.status !== 201)
    throw new Error(`broker PUT answered ${brokerPut.status}: ${JSON.stringify(brokerPut.body)}`);

  const put = async (p: Partner, brokerId: string, body: Record<string, unknown>): Promise<MarketListing> => {
    const res = await p.put(`/partner/v1/listings/${uniqueName("listing")}`, sample.listing(brokerId, body));
    if (res.status !== 201) throw new Error(`listing PUT answered ${res.status}: ${JSON.stringify(res.body)}`);
    return { id: res.body.serviceListingId, url: res.body.serviceListingUrl, title: body.title as string };
  };
  const portland = (visibility: string) => ({
    streetAddress1: "412 SE Division St",
    city: "Portland",
    state: "OR",
    postalCode: "97202",
    country: "US",
    visibility,
  });

  const bakery = await put(partner, brokerExternalId, {
    title: "Neighborhood bakery & café",
    businessType: "Bakery",
    description: BAKERY_DESCRIPTION,
    establishedAt: "2011-04-01T00:00:00Z",
    location: portland("SHOW_CITY_STATE"),
    financials: { askingPrice: 385000, revenue: 720000, sde: 165000, inventory: 18000, ffande: 95000 },
    property: {
      propertyKind: "RENTED",
      areaSqft: 1800,
      rentData: { amount: 5200, frequency: "MONTHLY", leaseRenewable: true, leaseExpiration: "2029-06-30T00:00:00Z" },
    },
    financing: { financingAvailable: true, sbaPrequalified: true, minimumDownPayment: 120000 },
    photos: [
      { url: images.url("/front.jpg"), sortKey: 1 },
      { url: images.url("/counter.jpg"), sortKey: 2 },
      { url: images.url("/kitchen.jpg"), sortKey: 3 },
    ],
  });
  const roastery = await put(partner, brokerExternalId, {
    title: "Artisan coffee roastery with wholesale accounts",
    businessType: "Coffee Shop",
    status: "UNDER_CONTRACT",
    description: "Roasting since 2015 for forty wholesale accounts and a busy tasting room.",
    location: { ...portland("SHOW_FULL_ADDRESS"), streetAddress1: "88 NW 23rd Ave", postalCode: "97210" },
    financials: { askingPrice: 540000, revenue: 1100000, sde: 210000 },
    financing: { financingAvailable: false },
    photos: [{ url: images.url("/roastery.jpg"), sortKey: 1 }],
  });
  const salem = await put(partner, brokerExternalId, {
    title: "Family bakery with drive-through",
    businessType: "Bakery",
    status: "PENDING_CONTRACT",
    description: "Donuts and coffee at a drive-through on a commuter route.",
    location: {
      streetAddress1: "9 Lancaster Dr NE",
      city: "Salem",
      state: "OR",
      postalCode: "97301",
      country: "US",
      visibility: "SHOW_STATE_ONLY",
    },
    financials: { askingPrice: 210000, revenue: 480000, sde: 98000 },
    financing: { financingAvailable: false },
    photos: [],
  });

  const hiddenMarker = `hx${token}`;
  const hidden = (status: string) =>
    put(partner, brokerExternalId, {
      title: `Hidden bakery ${hiddenMarker} ${status.toLowerCase()}`,
      businessType: "Bakery",
      status: status === "SOLD" ? "FOR_SALE" : status,
      description: `Secret ${hiddenMarker} recipe.`,
      location: portland("SHOW_CITY_STATE"),
      photos: [],
    });
  const sold = await hidden("SOLD");
  const archived = await hidden("ARCHIVED");
  const draft = await hidden("DRAFT");

  const fillerBroker = uniqueName("broker");
  await fillerPartner.put(
    `/partner/v1/brokers/${fillerBroker}`,
    sample.broker({ name: "Sam Okafor", email: `${uniqueName("sam")}@example.com` }),
  );
  const fillers: MarketListing[] = [];
  for (const [i, [title, businessType, city, state, askingPrice]] of FILLERS.entries()) {
    fillers.push(
      await put(fillerPartner, fillerBroker, {
        title,
        businessType,
        description: `${title}, with a steady customer base and trained staff.`,
        location: { city, state, country: "US", visibility: "SHOW_CITY_STATE" },
        financials: { askingPrice, revenue: askingPrice * 2, sde: Math.round(askingPrice * 0.4) },
        financing: { financingAvailable: i % 2 === 0 },
        photos: [{ url: `https://images.example.com/${token}/${i}.jpg`, sortKey: 1 }],
      }),
    );
  }

  // Visible once, then sold: the indexer must remove it.
  await indexedState(api.sql, sold.id, 60_000);
  await partner.put(
    `/partner/v1/listings/${(await api.sql`SELECT external_id FROM listings WHERE id = ${sold.id}`)[0]!.external_id}`,
    { status: "SOLD" },
  );

  const live = [bakery, roastery, salem, ...fillers];
  for (const l of [...live, sold, archived, draft]) await indexedState(api.sql, l.id, 60_000);
  await until(
    "photos and avatar processed",
    async () => {
      const [row] = await api.sql`
      SELECT (SELECT count(*)::int FROM listing_photos WHERE listing_id = ANY(${[bakery.id, roastery.id]}::bigint[]) AND state <> 'ready') AS photos,
             (SELECT avatar_state FROM brokers WHERE partner_id = ${partner.partnerId} AND external_id = ${brokerExternalId}) AS avatar`;
      if (row!.photos === 0 && row!.avatar === "failed") throw new Error("the avatar failed to process");
      return row!.photos === 0 && row!.avatar === "ready";
    },
    90_000,
  );
  // The other partner's photos are not downloaded (its records are not the media service's here): they get the
  // bakery's processed variants, as if processed, so every card has a picture.
  const processed =
    await api.sql`SELECT width, height, variants FROM listing_photos WHERE listing_id = ${bakery.id} ORDER BY sort_key`;
  for (const [i, f] of fillers.entries()) {
    const p = processed[i % processed.length]!;
    await api.sql`UPDATE listing_photos SET state = 'ready', width = ${p.width}, height = ${p.height}, variants = ${api.sql.json(p.variants)} WHERE listing_id = ${f.id}`;
  }
  await idx.opensearch.indices.refresh({ index: idx.alias });

  const [brokerRow] =
    await api.sql`SELECT id::text AS id FROM brokers WHERE partner_id = ${partner.partnerId} AND external_id = ${brokerExternalId}`;
  return {
    base,
    api,
    idx,
    sink,
    partner,
    broker: { id: brokerRow!.id, url: brokerPut.body.serviceProfileUrl, name: "Maria Alvarez", forwardingEmail },
    bakery,
    roastery,
    salem,
    fillers,
    hiddenMarker,
    sold,
    archived,
    draft,
    async stop() {
      // Off the market, so later runs' "similar listings" show their own listings only.
      await api.sql`UPDATE listings SET status = 'ARCHIVED' WHERE partner_id = ANY(${[partner.partnerId, fillerPartner.partnerId]}::uuid[])`;
      await workers.stop();
      transport.close();
      await sink.stop();
      await media.stop();
      await idx.stop();
      await api.stop();
      images.stop();
      await deleteSearchIndex(idx.alias);
    },
  };
}

/** The partner's image host: pictures in fixed colours (the same files, and screenshots, every run). */
async function startPictureHost() {
  const pictures: Record<string, Buffer> = {
    "/front.jpg": await makePicture(2000, 1500, "jpeg", { colour: { r: 176, g: 118, b: 74 } }),
    "/counter.jpg": await makePicture(1800, 1200, "jpeg", { colour: { r: 214, g: 170, b: 96 } }),
    "/kitchen.jpg": await makePicture(1600, 1200, "jpeg", { colour: { r: 139, g: 92, b: 82 } }),
    "/roastery.jpg": await makePicture(1200, 900, "jpeg", { colour: { r: 96, g: 72, b: 58 } }),
    "/maria.jpg": await makePicture(800, 800, "jpeg", { colour: { r: 104, g: 140, b: 166 } }),
  };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req) => {
      const picture = pictures[new URL(req.url).pathname];
      return picture
        ? new Response(picture, { headers: { "content-type": "image/jpeg" } })
        : new Response("not found", { status: 404 });
    },
  });
  return {
    port: server.port!,
    url: (path: string) => `http://127.0.0.1:${server.port}${path}`,
    stop: () => server.stop(true),
  };
}
