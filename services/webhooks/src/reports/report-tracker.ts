// The processing report's overall state (issue 24), announced as listing.report.changed when it changes.
//
// The state depends on what several services write (the API's PUTs, media's photo outcomes, the indexer's
// publication, a broker's phone), so no single writer can tell it changed. This consumer follows their events
// (listing and broker events, and the facts on the partner-events topic) and, per listing they concern, computes
// the state with the report's own rules (listingReport in @pss/contracts, as GET …/report does). A change is
// stored in listings.report_state together with its fact in the outbox, in one transaction, under the listing's
// row lock: the fact is written with the change that makes it true, two instances never announce one change
// twice, and an event consumed again finds the state already stored and announces nothing.
//
// A broker event concerns every listing of the broker (its phone is in the report): tens of thousands for a big
// broker. The handler only records the broker (report_recompute_brokers, migration 0032; one row whatever the
// count) and a background pass works through its listings in pages keyed by listing ID (an event during a pass does
// not restart it: one more pass follows it), each page one short
// transaction that locks only the page's rows it can take at once (SKIP LOCKED: it never queues behind a
// partner's PUT; the page stops at a row a writer holds, which is then recomputed on its own). So the consumer is
// never stalled by one broker, and a PUT waits at most for one page.
//
// Every recomputation also keeps the listing's summary (listing_report_summaries, migration 0045: status, state,
// quality score, warning codes) for the partner portal's overview and filters, written only when it differs.
import {
  BrokerUpserted,
  isBuyerVisible,
  ListingMediaProcessed,
  ListingPublished,
  ListingUnpublished,
  ListingUpserted,
  listingQuality,
  ListingReportChanged,
  listingReportChangedFact,
  reportState,
  type AnyEventEnvelope,
  type ReportState,
} from "@pss/contracts";
import {
  createPeriodicJob,
  insertOutboxFacts,
  partnerFactRow,
  type Logger,
  type OutboxFactRow,
} from "@pss/service-kit";
import type postgres from "postgres";

export interface ReportTrackerDeps {
  sql: postgres.Sql;
  logger: Logger;
  /** When set, events of other partners are skipped (tests share Kafka). */
  onlyPartners?: ReadonlySet<string>;
  /** Listings per page of a broker's pass (default 500). */
  pageSize?: number;
  /** Pause of the broker pass when nothing waits (default 1 s; a broker event wakes it at once). */
  intervalMs?: number;
}

/** A photo as the report reads it (the json_agg below). */
type ReportPhoto = {
  url: string;
  state: "pending" | "ready" | "failed";
  width: number | null;
  height: number | null;
  failureReason: string | null;
};

/** A listing's report as the portal's overview and filters read it (listing_report_summaries). */
interface Summary {
  id: string;
  partnerId: string;
  mode: string;
  externalId: string;
  title: string | null;
  brokerId: string;
  /** listings.updated_at as PostgreSQL prints it (compared as text, written back as timestamptz). */
  updatedAt: string;
  status: string;
  state: ReportState;
  score: number;
  /** Distinct warning codes, sorted. */
  warnings: string[];
}

function sameSummary(row: postgres.Row, s: Summary): boolean {
  return (
    row.summary_state === s.state &&
    row.summary_status === s.status &&
    row.summary_score === s.score &&
    row.summary_broker_id === s.brokerId &&
    row.summary_updated_at === s.updatedAt &&
    (row.summary_title ?? null) === s.title &&
    Array.isArray(row.summary_warnings) &&
    row.summary_warnings.join(",") === s.warnings.join(",")
  );
}

/** Upserts the summaries that changed (in listing ID order, as the rows are locked). */
async function writeSummaries(tx: postgres.TransactionSql, summaries: Summary[]): Promise<void> {
  if (summaries.length === 0) return;
  // Warning codes travel as one comma-joined text each (codes never hold a comma): unnest cannot take an array of arrays.
  await tx`
    INSERT INTO listing_report_summaries AS s
      (listing_id, partner_id, mode, external_id, title, broker_id, updated_at, status, state, score, warnings)
    SELECT u.id, u.partner_id, u.mode, u.external_id, u.title, u.broker_id, u.updated_at, u.status, u.state, u.score,
           string_to_array(u.warnings, ',')
    FROM unnest(${summaries.map((x) => x.id)}::bigint[], ${summaries.map((x) => x.partnerId)}::uuid[], ${summaries.map((x) => x.mode)}::text[],
                ${summaries.map((x) => x.externalId)}::text[], ${summaries.map((x) => x.title)}::text[],
                ${summaries.map((x) => x.brokerId)}::bigint[], ${summaries.map((x) => x.updatedAt)}::timestamptz[],
                ${summaries.map((x) => x.status)}::text[], ${summaries.map((x) => x.state)}::text[],
                ${summaries.map((x) => x.score)}::smallint[], ${summaries.map((x) => x.warnings.join(","))}::text[])
         AS u(id, partner_id, mode, external_id, title, broker_id, updated_at, status, state, score, warnings)
    ON CONFLICT (listing_id) DO UPDATE SET partner_id = excluded.partner_id, mode = excluded.mode, external_id = excluded.external_id,
      title = excluded.title, broker_id = excluded.broker_id, updated_at = excluded.updated_at, status = excluded.status,
      state = excluded.state, score = excluded.score, warnings = excluded.warnings, computed_at = now()`;
}

/** Facts that change what the report reads; the tracker's own fact is not one. */
const LISTING_FACTS = new Set<string>([ListingPublished.type, ListingUnpublished.type, ListingMediaProcessed.type]);

export function createReportTracker(deps: ReportTrackerDeps) {
  const pageSize = deps.pageSize ?? 500;

  /**
   * Recomputes listings this transaction holds the row locks of, read after the locks (a fresh snapshot that sees
   * every change committed before them); stores and announces each state that changed. Returns those.
   */
  async function recomputeLocked(tx: postgres.TransactionSql, ids: string[]): Promise<Map<string, ReportState>> {
    const changed = new Map<string, ReportState>();
    if (ids.length === 0) return changed;
    const rows = await tx`
      SELECT l.id::text AS id, l.partner_id, l.mode, l.external_id, l.status, l.version, l.title, l.description, l.street_address1, l.postal_code,
             l.country, l.visibility, l.financials, l.published_at, l.report_state, l.report_version, b.phone AS broker_phone, l.broker_id::text AS broker_id,
             l.updated_at::text AS updated_at, s.updated_at::text AS summary_updated_at, s.title AS summary_title,
             s.status AS summary_status, s.state AS summary_state, s.score AS summary_score, s.warnings AS summary_warnings,
             s.broker_id::text AS summary_broker_id,
             COALESCE((SELECT json_agg(json_build_object('url', p.url, 'state', p.state, 'width', p.width, 'height', p.height,
                         'failureReason', p.failure_reason) ORDER BY p.sort_key, p.id) FROM listing_photos p WHERE p.listing_id = l.id), '[]') AS photos
      FROM listings l JOIN brokers b ON b.id = l.broker_id LEFT JOIN listing_report_summaries s ON s.listing_id = l.id
      WHERE l.id = ANY(${ids}::bigint[]) ORDER BY l.id`;
    const updates: { id: string; state: ReportState; version: number }[] = [];
    const summaries: Summary[] = [];
    const facts: OutboxFactRow[] = [];
    for (const row of rows) {
      const photos = row.photos as ReportPhoto[];
      const quality = listingQuality({
        status: row.status,
        title: row.title,
        description: row.description,
        location: {
          streetAddress1: row.street_address1,
          postalCode: row.postal_code,
          country: row.country,
          visibility: row.visibility,
        },
        financials: row.financials,
        photos,
        brokerPhone: row.broker_phone,
      });
      const { state, reasons } = reportState({
        mode: row.mode,
        status: row.status,
        publishedAt: row.published_at ? new Date(row.published_at).toISOString() : null,
        photos: photos.map((p) => ({ ...p, updatedAt: null })),
        quality,
      });
      const summary: Summary = {
        id: String(row.id),
        partnerId: row.partner_id,
        mode: row.mode,
        externalId: row.external_id,
        title: row.title ?? null,
        brokerId: row.broker_id,
        updatedAt: row.updated_at,
        status: row.status,
        state,
        score: quality.qualityScore,
        warnings: [...new Set(quality.warnings.map((w) => w.code))].sort(),
      };
      if (!sameSummary(row, summary)) summaries.push(summary);
      if (state === row.report_state) continue;
      // report_version is written only here, under the row lock: the next version is known now.
      const reportVersion = Number(row.report_version) + 1;
      const id = String(row.id);
      facts.push(
        partnerFactRow(
          ListingReportChanged,
          { aggregateId: id, version: reportVersion, partnerId: row.partner_id, mode: row.mode },
          listingReportChangedFact(
            {
              externalListingId: row.external_id,
              serviceListingId: Number(row.id),
              state,
              previousState: row.report_state ?? null,
              reasons,
              listingVersion: row.version,
            },
            reportVersion,
          ),
        ),
      );
      updates.push({ id, state, version: reportVersion });
      changed.set(id, state);
      deps.logger.debug("report state changed", {
        listingId: id,
        from: row.report_state,
        to: state,
        visibleStatus: isBuyerVisible(row.status),
      });
    }
    await writeSummaries(tx, summaries);
    if (updates.length === 0) return changed;
    await tx`
      UPDATE listings l SET report_state = u.state, report_version = u.version
      FROM unnest(${updates.map((u) => u.id)}::bigint[], ${updates.map((u) => u.state)}::text[], ${updates.map((u) => u.version)}::int[]) AS u(id, state, version)
      WHERE l.id = u.id`;
    await insertOutboxFacts(tx, facts);
    return changed;
  }

  /** Recomputes one listing's state, waiting for its row lock; returns the new state when it changed (and was announced). */
  async function recompute(listingId: string): Promise<ReportState | null> {
    return deps.sql.begin(async (tx) => {
      const [locked] = await tx`SELECT id FROM listings WHERE id = ${listingId}::bigint FOR UPDATE`;
      if (!locked) return null; // deleted (test data purge): nothing to report
      return (await recomputeLocked(tx, [listingId])).get(listingId) ?? null;
    });
  }

  /** Records that every listing of the broker is to be recomputed: one row, whatever their number. */
  async function requestBrokerPass(brokerId: string): Promise<void> {
    // A pass under way goes on (restarting it would let a broker changed often starve its later listings) and then
    // runs once more from the first listing: this event's change concerns the listings done too. Events meanwhile
    // coalesce into that one further pass (migration 0036).
    await deps.sql`
      INSERT INTO report_recompute_brokers (broker_id)
      SELECT id FROM brokers WHERE id = ${brokerId}::bigint
      ON CONFLICT (broker_id) DO UPDATE SET again = true, requested_at = clock_timestamp()`;
    pass.wake();
  }

  /**
   * One page of one waiting broker: its next `pageSize` listings by ID, recomputed in one transaction that holds
   * the broker's row of report_recompute_brokers (two instances never work one broker at once) and the locks of
   * the page's listings it can take without waiting (a PUT holding one is never queued behind, nor queues behind
   * more than one page). The place kept stops before the first listing it could not lock; that one is then
   * recomputed on its own, waiting for its writer, and the place moves past it. Nothing is lost to a crash or a
   * failure in between: the next page starts at it again. True when more may wait.
   */
  async function passPage(): Promise<boolean> {
    const partners = deps.onlyPartners ? [...deps.onlyPartners] : null;
    let held: { brokerId: string; listingId: string; requestedAt: string } | null = null;
    const found = await deps.sql.begin(async (tx) => {
      const [job] = await tx<{ broker_id: string; after_listing_id: string; requested_at: string; again: boolean }[]>`
        SELECT r.broker_id::text AS broker_id, r.after_listing_id::text AS after_listing_id, r.requested_at::text AS requested_at, r.again
        FROM report_recompute_brokers r
        ${partners ? tx`JOIN brokers b ON b.id = r.broker_id WHERE b.partner_id = ANY(${partners}::uuid[])` : tx``}
        ORDER BY r.requested_at LIMIT 1 FOR UPDATE OF r SKIP LOCKED`;
      if (!job) return false;
      // Ordered by the bigint (the text alias would order "1000" before "206").
      const page = (
        await tx<{ id: string }[]>`
          SELECT l.id::text AS id FROM listings l WHERE l.broker_id = ${job.broker_id}::bigint AND l.id > ${job.after_listing_id}::bigint
          ORDER BY l.id LIMIT ${pageSize}`
      ).map((r) => r.id);
      const locked = new Set(
        (
          await tx<{ id: string }[]>`
            SELECT l.id::text AS id FROM listings l WHERE l.id = ANY(${page}::bigint[]) ORDER BY l.id FOR UPDATE SKIP LOCKED`
        ).map((r) => r.id),
      );
      const firstHeld = page.findIndex((id) => !locked.has(id));
      await recomputeLocked(tx, firstHeld < 0 ? page : page.slice(0, firstHeld));
      if (firstHeld >= 0) {
        held = { brokerId: job.broker_id, listingId: page[firstHeld]!, requestedAt: job.requested_at };
        await tx`
          UPDATE report_recompute_brokers SET after_listing_id = ${held.listingId}::bigint - 1 WHERE broker_id = ${job.broker_id}::bigint`;
      } else if (page.length < pageSize) {
        // The broker's last listing: done, unless an event came during the pass (then once more from the first).
        if (job.again)
          await tx`
            UPDATE report_recompute_brokers SET after_listing_id = 0, again = false WHERE broker_id = ${job.broker_id}::bigint`;
        else await tx`DELETE FROM report_recompute_brokers WHERE broker_id = ${job.broker_id}::bigint`;
      } else {
        await tx`
          UPDATE report_recompute_brokers SET after_listing_id = ${page.at(-1)!}::bigint WHERE broker_id = ${job.broker_id}::bigint`;
      }
      return true;
    });
    const h = held as { brokerId: string; listingId: string; requestedAt: string } | null;
    if (h) {
      // After its writer (a single row's wait), then past it, unless a new event restarted the broker meanwhile.
      await recompute(h.listingId);
      await deps.sql`
        UPDATE report_recompute_brokers SET after_listing_id = ${h.listingId}::bigint
        WHERE broker_id = ${h.brokerId}::bigint AND after_listing_id = ${h.listingId}::bigint - 1 AND requested_at::text = ${h.requestedAt}`;
    }
    return found;
  }

  const pass = createPeriodicJob({
    name: "report-broker-pass",
    logger: deps.logger,
    tick: () => passPage(),
    intervalMs: deps.intervalMs ?? 1_000,
    backoff: { initialMs: 1_000, maxMs: 30_000 },
    failureMessage: "recomputing a broker's listings' reports failed; trying again",
  });

  /** The listings a listing event or fact concerns (a broker's are the background pass's). */
  function listingsOf(event: AnyEventEnvelope): string[] {
    if (event.aggregateType === "listing" && (event.type === ListingUpserted.type || LISTING_FACTS.has(event.type)))
      return [event.aggregateId];
    return [];
  }

  return {
    recompute,
    async handle(event: AnyEventEnvelope): Promise<void> {
      if (deps.onlyPartners && !deps.onlyPartners.has(event.partnerId)) return;
      if (!/^[1-9][0-9]{0,18}$/.test(event.aggregateId)) return;
      if (event.aggregateType === "broker" && event.type === BrokerUpserted.type)
        return requestBrokerPass(event.aggregateId);
      for (const id of listingsOf(event)) await recompute(id);
    },
    /** The background pass over brokers' listings (requestBrokerPass); runs on every instance. */
    start: () => pass.start(),
    stop: () => pass.stop(),
    /** Tests: run the pass now. */
    wake: () => pass.wake(),
  };
}

export type ReportTracker = ReturnType<typeof createReportTracker>;
