// listing.report.changed (issue 24, part 2) end to end on the real servers: the API writes, the real indexer
// publishes, the webhooks service's report tracker follows the events, stores each change of the overall state with
// its fact in the outbox, and the delivery reaches a real receiver, signed. A state that did not change is never
// announced, and concurrent recomputes announce a change once.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { silentLogger } from "@pss/service-kit";
import { sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { deleteSearchIndex, startIndexer, type IndexerHarness } from "../../indexer/test/support/indexer-harness.ts";
import { uniqueName } from "../../../test/support/env.ts";
import { createReportTracker } from "../src/reports/report-tracker.ts";
import { startReceiver, verified, type Receiver } from "./support/receiver.ts";
import { startWebhooks, until, type WebhooksHarness } from "./support/webhooks-harness.ts";

let api: ApiHarness;
let receiver: Receiver;
let indexer: IndexerHarness;
let webhooks: WebhooksHarness;
let partner: Partner;
const partners = new Set<string>();
const endpointId = uniqueName("reports");
const path = `/hooks/${endpointId}`;
let secret = "";

beforeAll(async () => {
  receiver = startReceiver();
  api = await startApi();
  partner = await api.createPartner();
  partners.add(partner.partnerId);
  [indexer, webhooks] = await Promise.all([
    startIndexer({ onlyPartners: partners }),
    startWebhooks({ allowedHosts: [receiver.hostPort], publicBaseUrl: api.baseUrl, partners }),
  ]);
  const res = await partner.put(`/partner/v1/webhook-endpoints/${endpointId}`, {
    url: receiver.url(path),
    events: ["listing.report.changed"],
  });
  expect(res.status).toBe(201);
  secret = res.body.secret;
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([webhooks?.stop(), indexer?.stop()]);
  if (indexer) await deleteSearchIndex(indexer.alias);
  receiver?.stop();
  if (api) {
    await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ${partner.partnerId}::uuid`;
    await api.stop();
  }
}, 60_000);

const changes = (externalListingId: string) =>
  receiver
    .requests(path)
    .map((r) => verified(r, secret))
    .filter((b) => b.type === "listing.report.changed" && b.data.externalListingId === externalListingId)
    .map((b) => b.data)
    .sort((a, b) => a.version - b.version);

const factCount = async (serviceListingId: number) =>
  (
    await api.sql`SELECT count(*)::int AS n FROM outbox WHERE payload->>'type' = 'listing.report.changed' AND payload->>'aggregateId' = ${String(serviceListingId)}`
  )[0]!.n as number;

test("each change of the overall state is delivered once, in version order, with the previous state and the reasons", async () => {
  const brokerId = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
  // The tracker announces the state it finds when it handles an event (docs/webhooks.md): an indexer faster than
  // the tracker would make PROCESSING too short to be seen. So the indexer waits until PROCESSING is announced,
  // then goes on from its group's committed place.
  const { alias, groupId } = indexer;
  await indexer.stop();
  const id = uniqueName("listing");
  const put = await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId, { photos: [] }));
  expect(put.status).toBe(201);
  const serviceListingId = put.body.serviceListingId as number;
  await until("PROCESSING delivered", () => changes(id).find((c) => c.state === "PROCESSING") ?? null, 60_000);
  indexer = await startIndexer({ alias, groupId, startAtEnd: false, onlyPartners: partners });

  // Stored, then indexed by the real indexer: PROCESSING, then live with the sample's warnings.
  const live = await until(
    "LIVE_WITH_WARNINGS delivered",
    () => changes(id).find((c) => c.state === "LIVE_WITH_WARNINGS") ?? null,
    60_000,
  );
  expect(live).toEqual({
    externalListingId: id,
    serviceListingId,
    serviceListingUrl: `${api.baseUrl}/listings/${serviceListingId}`, // the webhooks service's PUBLIC_BASE_URL here
    state: "LIVE_WITH_WARNINGS",
    previousState: "PROCESSING",
    reasons: [{ code: "HAS_WARNINGS", message: "Buyers see it; 2 warnings say what they miss" }],
    listingVersion: 1,
    version: 2,
    sequence: expect.any(Number), // the change feed's number for this fact (docs/webhooks.md)
  });
  expect(changes(id)[0]).toMatchObject({ state: "PROCESSING", previousState: null, version: 1 });
  expect(changes(id)[0]!.sequence).toBeLessThan(live.sequence as number);
  expect((await partner.get(`/partner/v1/listings/${id}/report`)).body.report.state).toBe("LIVE_WITH_WARNINGS");

  // An update that leaves the state as it is announces nothing; a status buyers do not see does.
  expect((await partner.put(`/partner/v1/listings/${id}`, { title: "Renamed taqueria" })).status).toBe(200);
  expect((await partner.put(`/partner/v1/listings/${id}`, { status: "SOLD" })).status).toBe(200);
  const sold = await until(
    "NOT_VISIBLE delivered",
    () => changes(id).find((c) => c.state === "NOT_VISIBLE") ?? null,
    60_000,
  );
  expect(sold).toMatchObject({
    previousState: "LIVE_WITH_WARNINGS",
    version: 3,
    listingVersion: 3,
    reasons: [{ code: "STATUS_NOT_VISIBLE" }],
  });
  // The indexer's unpublication follows; it changes nothing more.
  await until(
    "the index removal recorded",
    async () =>
      (await api.sql`SELECT index_state FROM listings WHERE id = ${serviceListingId}`)[0]!.index_state === "removed"
        ? true
        : null,
    60_000,
  );
  await Bun.sleep(1500);
  expect(changes(id).map((c) => c.state)).toEqual(["PROCESSING", "LIVE_WITH_WARNINGS", "NOT_VISIBLE"]);
  // The feed numbers them in the order they happened, so a receiver can order them and see a gap.
  const sequences = changes(id).map((c) => c.sequence as number);
  expect([...sequences].sort((a, b) => a - b)).toEqual(sequences);
  expect(await factCount(serviceListingId)).toBe(3);
}, 150_000);

test("concurrent recomputes of one change announce it once", async () => {
  const brokerId = uniqueName("broker");
  await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker());
  const id = uniqueName("listing");
  const put = await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId, { status: "DRAFT" }));
  const serviceListingId = String(put.body.serviceListingId);
  // Wait for the running tracker's own announcement, then change the state behind its back and race five recomputes.
  await until(
    "NOT_VISIBLE stored",
    async () =>
      (await api.sql`SELECT report_state FROM listings WHERE id = ${serviceListingId}`)[0]!.report_state ===
      "NOT_VISIBLE"
        ? true
        : null,
    60_000,
  );
  const tracker = createReportTracker({ sql: api.sql, logger: silentLogger });
  await api.sql`UPDATE listings SET report_state = 'PROCESSING' WHERE id = ${serviceListingId}`;
  const results = await Promise.all(Array.from({ length: 5 }, () => tracker.recompute(serviceListingId)));
  // The running service's pass over the broker's listings (its broker event) may be a sixth recompute in the race
  // and win it: one of them announces the change, exactly once.
  expect(results.filter((r) => r !== null).length).toBeLessThanOrEqual(1);
  const [row] = await api.sql`SELECT report_state, report_version FROM listings WHERE id = ${serviceListingId}`;
  expect(row).toEqual({ report_state: "NOT_VISIBLE", report_version: 2 });
  expect(await factCount(Number(serviceListingId))).toBe(2);
  // A recompute with nothing changed announces nothing.
  expect(await tracker.recompute(serviceListingId)).toBeNull();
}, 90_000);
