// The indexer's batch handler: listing events index or remove one listing; broker events re-index the broker's
// visible listings (its name is on every result). Per batch: one read of PostgreSQL, one bulk request, one
// write of index states. Stale events are skipped (PostgreSQL already holds a newer version, whose event is on
// its way or already applied); OpenSearch's external versions guard the rest, e.g. two consumers during a rebalance.
//
// Test listings (docs/sandbox.md; mode "test" in PostgreSQL or on the event) are never written to the public
// index: their index state is recorded as a live listing's would be (indexed or removed), so the partner's
// read-back behaves as live, and their description is rewritten deterministically, never by an external model.
import type { Client } from "@opensearch-project/opensearch";
import { eventMode, type AnyEventEnvelope, type FullLocation, type ListingStatus } from "@pss/contracts";
import type { EventTrace, Logger, MessageContext } from "@pss/service-kit";
import type postgres from "postgres";
import { buyerDescriptions } from "../rewriting/buyer-descriptions.ts";
import type { DescriptionRewriter } from "../rewriting/description-rewriter.ts";
import { writeBulk, type IndexOperation, type OperationOutcome } from "../search-index/bulk-writer.ts";
import { toSearchDocument, type ListingSource } from "../search-index/search-document.ts";
import {
  BROKER_UPSERTED,
  brokerEventProblem,
  LISTING_UPSERTED,
  listingEventProblem,
  type ListingEventPayload,
} from "./event-payloads.ts";
import {
  loadBrokerVersions,
  loadListingStates,
  loadVisibleListingsOfBrokers,
  recordIndexStates,
  type StoredListingState,
} from "./listing-store.ts";
import { publicIndexAction } from "./public-index-rule.ts";

export interface IndexingDeps {
  sql: postgres.Sql;
  opensearch: Client;
  alias: string;
  rewriter: DescriptionRewriter;
  logger: Logger;
  /** Creates the index behind the alias if needed; throws while OpenSearch is unavailable. */
  ensureIndex: () => Promise<void>;
  /** Parallel rewrites per batch (matters for an LLM backend). */
  rewriteConcurrency?: number;
}

type Item = { event: AnyEventEnvelope; ctx: MessageContext };
type Failure = { event: AnyEventEnvelope; reason: string };
type Planned = { op: IndexOperation; event: AnyEventEnvelope };
/** `trace`: the event's (its consumer span), carried by the listing.published fact this state may announce. */
type IndexState = { id: number; version: number; state: "indexed" | "removed"; trace?: EventTrace };

export type BatchHandler = (items: Item[]) => Promise<Failure[]>;

function sourceFromPayload(p: ListingEventPayload, version: number): ListingSource {
  return {
    id: p.listingId,
    version,
    status: p.status as ListingStatus,
    businessType: p.businessType,
    title: p.title,
    description: p.description,
    establishedAt: p.establishedAt,
    location: p.location as FullLocation,
    financials: p.financials,
    financing: p.financing ?? null,
    updatedAt: p.updatedAt,
  };
}

/** Latest event per aggregate: earlier ones in the same batch are superseded by it. */
function latestPerAggregate(events: AnyEventEnvelope[]): AnyEventEnvelope[] {
  const latest = new Map<string, AnyEventEnvelope>();
  for (const e of events) {
    const seen = latest.get(e.aggregateId);
    if (!seen || e.version >= seen.version) latest.set(e.aggregateId, e);
  }
  return [...latest.values()];
}

export function createIndexingHandler(deps: IndexingDeps): BatchHandler {
  const log = deps.logger.child({ component: "indexing" });
  const concurrency = deps.rewriteConcurrency ?? 4;

  function descriptions(entries: { source: ListingSource; state: StoredListingState }[]) {
    return buyerDescriptions({ sql: deps.sql, rewriter: deps.rewriter, concurrency }, entries);
  }

  /** Index operations for live listings; for test listings only the state a live one would get (`tracked`). */
  async function planListings(
    events: AnyEventEnvelope[],
    failures: Failure[],
    tracked: IndexState[],
    logOf: (event: AnyEventEnvelope) => Logger,
    traceOf: (event: AnyEventEnvelope) => EventTrace | undefined,
  ): Promise<Planned[]> {
    const states = await loadListingStates(
      deps.sql,
      events.map((e) => Number(e.aggregateId)),
    );
    const current: { event: AnyEventEnvelope; source: ListingSource; state: StoredListingState }[] = [];
    for (const event of events) {
      const state = states.get(Number(event.aggregateId));
      if (!state) failures.push({ event, reason: `listing ${event.aggregateId} does not exist` });
      else if (event.version > state.version)
        failures.push({
          event,
          reason: `event version ${event.version} is ahead of the stored version ${state.version}`,
        });
      else if (event.version < state.version)
        logOf(event).debug("stale listing event skipped", { current: state.version });
      else
        current.push({ event, source: sourceFromPayload(event.payload as ListingEventPayload, event.version), state });
    }
    // Hidden and test listings are rewritten too: the partner sees the rewrite in the read-back before going live.
    const texts = await descriptions(current);
    const planned: Planned[] = [];
    for (const { event, source, state } of current) {
      const action = publicIndexAction({ status: source.status, mode: state.mode }, eventMode(event));
      if (action.kind === "track")
        tracked.push({ id: source.id, version: source.version, state: action.state, trace: traceOf(event) });
      else if (action.kind === "index")
        planned.push({
          event,
          op: {
            kind: "index",
            id: source.id,
            version: source.version,
            versionType: "external",
            document: toSearchDocument(source, state, texts.get(source.id) ?? null),
          },
        });
      else planned.push({ event, op: { kind: "delete", id: source.id, version: source.version } });
    }
    return planned;
  }

  async function planBrokers(events: AnyEventEnvelope[], failures: Failure[]): Promise<Planned[]> {
    const versions = await loadBrokerVersions(
      deps.sql,
      events.map((e) => e.aggregateId),
    );
    const due = new Map<string, AnyEventEnvelope>();
    for (const event of events) {
      const version = versions.get(event.aggregateId);
      if (version === undefined) failures.push({ event, reason: `broker ${event.aggregateId} does not exist` });
      else if (event.version > version)
        failures.push({ event, reason: `event version ${event.version} is ahead of the stored version ${version}` });
      else if (event.version === version) due.set(event.aggregateId, event);
      // Older: the broker's newest event re-indexes with the newest data.
    }
    // A broker's test listings stay out of the index (their broker is a test broker too).
    const listings = (await loadVisibleListingsOfBrokers(deps.sql, [...due.keys()])).filter(
      ({ source, state }) => publicIndexAction({ status: source.status, mode: state.mode }).kind === "index",
    );
    const texts = await descriptions(listings);
    // The listing's own version with external_gte: same-version rewrites (new broker name) are accepted,
    // an older listing version still never replaces a newer one.
    return listings.map(({ source, state }) => ({
      event: due.get(state.brokerId)!,
      op: {
        kind: "index",
        id: source.id,
        version: source.version,
        versionType: "external_gte",
        document: toSearchDocument(source, state, texts.get(source.id) ?? null),
      },
    }));
  }

  /** A line per listing event's write; one per broker event (it may re-index many listings). */
  function logWritten(
    planned: Planned[],
    outcomes: OperationOutcome[],
    logOf: (event: AnyEventEnvelope) => Logger,
  ): void {
    if (!log.enabled("info")) return;
    const perBroker = new Map<AnyEventEnvelope, number>();
    outcomes.forEach(({ op, result }, i) => {
      const { event } = planned[i]!;
      if (result === "rejected") return;
      if (event.aggregateType === "broker") perBroker.set(event, (perBroker.get(event) ?? 0) + 1);
      else
        logOf(event).info(op.kind === "index" ? "listing indexed" : "listing removed from the index", {
          listingId: op.id,
          result,
        });
    });
    for (const [event, listings] of perBroker) logOf(event).info("broker's listings re-indexed", { listings });
  }

  return async function handleBatch(items) {
    await deps.ensureIndex();
    // Lines about one event go to its context's logger (they carry its request ID and traceparent).
    const contexts = new Map(items.map(({ event, ctx }) => [event, ctx]));
    const logOf = (event: AnyEventEnvelope) => contexts.get(event)?.log ?? log;
    const traceOf = (event: AnyEventEnvelope) => contexts.get(event)?.trace;
    const failures: Failure[] = [];
    const listingEvents: AnyEventEnvelope[] = [];
    const brokerEvents: AnyEventEnvelope[] = [];
    for (const { event } of items) {
      if (event.type === LISTING_UPSERTED) {
        const problem = listingEventProblem(event);
        if (problem) failures.push({ event, reason: problem });
        else listingEvents.push(event);
      } else if (event.type === BROKER_UPSERTED) {
        const problem = brokerEventProblem(event);
        if (problem) failures.push({ event, reason: problem });
        else brokerEvents.push(event);
      }
      // Other event types on these topics are not the indexer's business.
    }
    const tracked: IndexState[] = [];
    const planned = [
      ...(await planListings(latestPerAggregate(listingEvents), failures, tracked, logOf, traceOf)),
      ...(await planBrokers(latestPerAggregate(brokerEvents), failures)),
    ];
    if (planned.length === 0) {
      await recordIndexStates(deps.sql, tracked);
      return failures;
    }

    const outcomes = await writeBulk(
      deps.opensearch,
      deps.alias,
      planned.map((p) => p.op),
    );
    const states: IndexState[] = [...tracked];
    const rejected = new Map<AnyEventEnvelope, string>();
    outcomes.forEach(({ op, result, reason }, i) => {
      if (result === "rejected") rejected.set(planned[i]!.event, `listing ${op.id}: ${reason}`);
      else
        states.push({
          id: op.id,
          version: op.version,
          state: op.kind === "index" ? "indexed" : "removed",
          trace: traceOf(planned[i]!.event),
        });
    });
    await recordIndexStates(deps.sql, states);
    logWritten(planned, outcomes, logOf);
    for (const [event, reason] of rejected) failures.push({ event, reason });
    const oldest = Math.min(...items.map(({ event }) => Date.parse(event.occurredAt)));
    log.debug("batch indexed", {
      events: items.length,
      operations: planned.length,
      failed: failures.length,
      lagMs: Date.now() - oldest,
    });
    return failures;
  };
}
