// A broker event concerns every listing of the broker (its phone is in the processing report). With thousands of
// listings the report tracker's handler must not do them all itself: it records the broker and returns, and the
// background pass recomputes every listing in short pages, while a partner's PUT of one of them goes through at
// once. A broker changed again and again during its pass does not restart the pass: its later listings are
// recomputed too. On the real PostgreSQL and API; the listings past the first are inserted in SQL (copies of the
// first).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { BrokerUpserted, type AnyEventEnvelope } from "@pss/contracts";
import { createLogger, silentLogger } from "@pss/service-kit";
import { sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { uniqueName } from "../../../test/support/env.ts";
import { createReportTracker, type ReportTracker } from "../src/reports/report-tracker.ts";
import { until } from "./support/webhooks-harness.ts";

const LISTINGS = 2_000;

let api: ApiHarness;
let partner: Partner;
let tracker: ReportTracker;
const trackers: ReportTracker[] = [];

function startTracker(of: Partner, pageSize: number): ReportTracker {
  const t = createReportTracker({
    sql: api.sql,
    logger: process.env.TEST_LOGS ? createLogger({ service: "report-pass-test", level: "debug" }) : silentLogger,
    onlyPartners: new Set([of.partnerId]),
    pageSize,
  });
  t.start();
  trackers.push(t);
  return t;
}

beforeAll(async () => {
  api = await startApi({ relay: false });
  partner = await api.createPartner();
  tracker = startTracker(partner, 500);
}, 60_000);

afterAll(async () => {
  await Promise.all(trackers.map((t) => t.stop()));
  await api?.stop();
});

/** A broker of `count` listings (the first PUT, the rest copies of it in SQL), none of them reported yet. */
async function brokerWithListings(of: Partner, count: number) {
  const brokerExternalId = uniqueName("broker");
  const broker = await of.put(`/partner/v1/brokers/${brokerExternalId}`, sample.broker());
  expect(broker.status).toBe(201);
  const first = uniqueName("listing");
  const put = await of.put(`/partner/v1/listings/${first}`, sample.listing(brokerExternalId, { photos: [] }));
  expect(put.status).toBe(201);
  const template = String(put.body.serviceListingId);
  const [owner] = await api.sql`SELECT broker_id::text AS broker_id FROM listings WHERE id = ${template}::bigint`;
  const brokerId = owner!.broker_id as string;
  // Copies of the first listing under new external IDs, none reported yet.
  const columns = (
    await api.sql<{ name: string }[]>`
      SELECT column_name AS name FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = 'listings'
        AND column_name NOT IN ('id', 'external_id', 'report_state', 'report_version', 'write_xid')`
  ).map((c) => c.name);
  const list = columns.map((c) => `"${c}"`).join(", ");
  await api.sql.unsafe(
    `INSERT INTO listings (external_id, ${list})
     SELECT $1 || n, ${list} FROM listings, generate_series(2, ${count}) AS n WHERE id = $2::bigint`,
    [`${first}-`, template],
  );
  await api.sql`UPDATE listings SET report_state = NULL, report_version = 0 WHERE broker_id = ${brokerId}::bigint`;
  const unreported = async () =>
    (
      await api.sql`SELECT count(*)::int AS n FROM listings WHERE broker_id = ${brokerId}::bigint AND report_state IS NULL`
    )[0]!.n as number;
  expect(await unreported()).toBe(count);
  /** A broker.upserted event for it, as the consumer hands it to the tracker. */
  const event = (): AnyEventEnvelope => ({
    eventId: crypto.randomUUID(),
    type: BrokerUpserted.type,
    aggregateType: "broker",
    aggregateId: brokerId,
    version: 2,
    partnerId: of.partnerId,
    mode: "live",
    occurredAt: new Date().toISOString(),
    payload: {},
  });
  const passEnded = async () =>
    (await api.sql`SELECT 1 FROM report_recompute_brokers WHERE broker_id = ${brokerId}::bigint`).length === 0;
  return { brokerId, first, unreported, event, passEnded };
}

test(`a broker event for a broker of ${LISTINGS} listings returns at once; a PUT of one of them is not held up; every report is recomputed`, async () => {
  const { brokerId, first, unreported, event, passEnded } = await brokerWithListings(partner, LISTINGS);
  // The consumer's handler only records the broker: it does not recompute thousands of listings itself.
  const handling = performance.now();
  await tracker.handle(event());
  expect(performance.now() - handling).toBeLessThan(1_000);

  // Meanwhile the pass is at work; a partner's PUT of one of the broker's listings is answered promptly.
  await until("the pass under way", async () => (await unreported()) < LISTINGS, 30_000);
  const putting = performance.now();
  const update = await partner.put(`/partner/v1/listings/${first}-${LISTINGS}`, { title: "Renamed while reporting" });
  expect(update.status).toBe(200);
  expect(performance.now() - putting).toBeLessThan(2_000);

  // Every listing's report is recomputed, each announced once, and the broker's pass is finished.
  await until("every report recomputed", async () => (await unreported()) === 0, 60_000);
  const [facts] = await api.sql`
    SELECT count(*)::int AS n, count(DISTINCT payload->>'aggregateId')::int AS listings FROM outbox
    WHERE payload->>'type' = 'listing.report.changed' AND payload->>'partnerId' = ${partner.partnerId}
      AND (payload->>'aggregateId')::bigint IN (SELECT id FROM listings WHERE broker_id = ${brokerId}::bigint)`;
  expect(facts).toEqual({ n: LISTINGS, listings: LISTINGS });
  await until("the broker's pass to end", passEnded, 10_000);
}, 120_000);

test("a broker changed again and again during its pass: the pass goes on to its last listing (one more pass follows), so every report is recomputed", async () => {
  const other = await api.createPartner();
  // Small pages: a pass over the broker takes many pages, each event arrives long before the pass could end.
  const busy = startTracker(other, 50);
  const { unreported, event, passEnded } = await brokerWithListings(other, LISTINGS);
  let events = 0;
  let changing = true;
  const changes = (async () => {
    // An event every 20 ms, for longer than the wait below: on a fast machine the pass still sees several of them.
    for (let i = 0; changing && i < 2_000; i++) {
      await busy.handle(event());
      events++;
      await Bun.sleep(20);
    }
  })();
  try {
    // Restarting from the first listing on every event, the pass would never reach the broker's later listings.
    await until(
      "every report recomputed while the broker keeps changing",
      async () => (await unreported()) === 0,
      30_000,
    );
    expect(events).toBeGreaterThan(5);
  } finally {
    changing = false;
    await changes;
  }
  // The events coalesced into one more pass, which ends.
  await until("the broker's pass to end", passEnded, 30_000);
}, 120_000);
