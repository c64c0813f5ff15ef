// The processing report's overall state (issue 24), announced as listing.report.changed when it changes.
//
// The state depends on what several services write (the API's PUTs, media's photo outcomes, the indexer's
// publication, a broker's phone), so no single writer can tell it changed. This consumer follows their events
// (listing and broker events, and the facts on the partner-events topic) and, per listing they concern, computes
// the state with the report's own rules (listingReport in @pss/contracts, as GET …/report does). A change is
// stored in listings.report_state together with its fact in the outbox, in one transaction, under the listing's
// row lock: the fact is written with the change that makes it true, two instances never announce one change
// twice, and an event consumed again finds the state already stored and announces nothing.
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
import { partnerFactRow, sqlJson, type Logger } from "@pss/service-kit";
import type postgres from "postgres";

export interface ReportTrackerDeps {
  sql: postgres.Sql;
  logger: Logger;
  /** When set, events of other partners are skipped (tests share Kafka). */
  onlyPartners?: ReadonlySet<string>;
}

/** Facts that change what the report reads; the tracker's own fact is not one. */
const LISTING_FACTS = new Set<string>([ListingPublished.type, ListingUnpublished.type, ListingMediaProcessed.type]);

export function createReportTracker(deps: ReportTrackerDeps) {
  /** Recomputes one listing's state; returns the new state when it changed (and was announced). */
  async function recompute(listingId: string): Promise<ReportState | null> {
    return deps.sql.begin(async (tx) => {
      const [locked] = await tx`SELECT id FROM listings WHERE id = ${listingId}::bigint FOR UPDATE`;
      if (!locked) return null; // deleted (test data purge): nothing to report
      // Read after the lock: a fresh snapshot that sees every change committed before it.
      const [row] = await tx`
        SELECT l.id, l.partner_id, l.mode, l.external_id, l.status, l.version, l.title, l.description, l.street_address1, l.postal_code,
               l.country, l.visibility, l.financials, l.published_at, l.report_state, l.report_version, b.phone AS broker_phone,
               COALESCE((SELECT json_agg(json_build_object('url', p.url, 'state', p.state, 'width', p.width, 'height', p.height,
                           'failureReason', p.failure_reason) ORDER BY p.sort_key, p.id) FROM listing_photos p WHERE p.listing_id = l.id), '[]') AS photos
        FROM listings l JOIN brokers b ON b.id = l.broker_id WHERE l.id = ${listingId}::bigint`;
      const photos = row!.photos as {
        url: string;
        state: "pending" | "ready" | "failed";
        width: number | null;
        height: number | null;
        failureReason: string | null;
      }[];
      const quality = listingQuality({
        status: row!.status,
        title: row!.title,
        description: row!.description,
        location: {
          streetAddress1: row!.street_address1,
          postalCode: row!.postal_code,
          country: row!.country,
          visibility: row!.visibility,
        },
        financials: row!.financials,
        photos,
        brokerPhone: row!.broker_phone,
      });
      const { state, reasons } = reportState({
        mode: row!.mode,
        status: row!.status,
        publishedAt: row!.published_at ? new Date(row!.published_at).toISOString() : null,
        photos: photos.map((p) => ({ ...p, updatedAt: null })),
        quality,
      });
      if (state === row!.report_state) return null;
      // report_version is written only here, under the row lock taken above: the next version is known now.
      const reportVersion = Number(row!.report_version) + 1;
      const fact = partnerFactRow(
        ListingReportChanged,
        { aggregateId: String(row!.id), version: reportVersion, partnerId: row!.partner_id, mode: row!.mode },
        listingReportChangedFact(
          {
            externalListingId: row!.external_id,
            serviceListingId: Number(row!.id),
            state,
            previousState: row!.report_state ?? null,
            reasons,
            listingVersion: row!.version,
          },
          reportVersion,
        ),
      );
      await tx`
        WITH changed AS (
          UPDATE listings SET report_state = ${state}, report_version = ${reportVersion} WHERE id = ${listingId}::bigint RETURNING id
        )
        INSERT INTO outbox (topic, message_key, payload)
        SELECT ${fact.topic}, ${fact.messageKey}, ${sqlJson(tx, fact.envelope)}::jsonb FROM changed`;
      deps.logger.debug("report state changed", {
        listingId,
        from: row!.report_state,
        to: state,
        visibleStatus: isBuyerVisible(row!.status),
      });
      return state;
    });
  }

  /** The listings an event concerns. */
  async function listingsOf(event: AnyEventEnvelope): Promise<string[]> {
    if (event.aggregateType === "listing" && (event.type === ListingUpserted.type || LISTING_FACTS.has(event.type)))
      return [event.aggregateId];
    if (event.aggregateType === "broker" && event.type === BrokerUpserted.type) {
      const rows =
        await deps.sql`SELECT id::text AS id FROM listings WHERE broker_id = ${event.aggregateId}::bigint ORDER BY id`;
      return rows.map((r) => r.id as string);
    }
    return [];
  }

  return {
    recompute,
    async handle(event: AnyEventEnvelope): Promise<void> {
      if (deps.onlyPartners && !deps.onlyPartners.has(event.partnerId)) return;
      if (!/^[1-9][0-9]{0,18}$/.test(event.aggregateId)) return;
      for (const id of await listingsOf(event)) await recompute(id);
    },
  };
}

export type ReportTracker = ReturnType<typeof createReportTracker>;
