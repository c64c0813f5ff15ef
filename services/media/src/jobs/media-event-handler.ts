// Listing and broker events only say "look at this record again": the current rows decide the work, so a
// redelivered or stale event is harmless. A malformed event is a PermanentError (the consumer dead-letters it).
import {
  BrokerUpsertedIdReader,
  decodePayload,
  ListingUpsertedMediaReader,
  type AnyEventEnvelope,
} from "@pss/contracts";
import { PermanentError, type HandleOutcome, type Logger, type MessageContext } from "@pss/service-kit";
import type { MediaJobs, MediaStats } from "./media-jobs.ts";
import type { MediaJob, MediaRepository } from "./media-repository.ts";

export interface MediaEventHandlerDeps {
  repository: MediaRepository;
  jobs: MediaJobs;
  logger: Logger;
  stats: MediaStats;
  leaseMs: number;
  /** When set, events of other partners are skipped (tests and the benchmark share Kafka with others). */
  onlyPartners?: ReadonlySet<string>;
}

const ID = /^[1-9][0-9]{0,18}$/;

/** What the media service reads of each record event (the catalog's reader forms): the record's ID. */
const READERS = { listingId: ListingUpsertedMediaReader, brokerId: BrokerUpsertedIdReader } as const;

/** The aggregate's ID, checked against the payload's own. */
function aggregateIdOf(event: AnyEventEnvelope, field: "listingId" | "brokerId"): string {
  const decoded = decodePayload(READERS[field], event.payload, event.type);
  const fromPayload = decoded.ok ? (decoded.value as Record<string, unknown>)[field] : undefined;
  if (!ID.test(event.aggregateId) || fromPayload === undefined || String(fromPayload) !== event.aggregateId) {
    throw new PermanentError(`${event.aggregateType} event payload has no ${field} matching aggregateId`);
  }
  return event.aggregateId;
}

/** Runs all jobs to their recorded outcome; rethrows the first infrastructure error once none is in flight. */
async function runAll(jobs: MediaJobs, claimed: MediaJob[], log: Logger): Promise<void> {
  const results = await Promise.allSettled(claimed.map((job) => jobs.run(job, log)));
  const failure = results.find((r) => r.status === "rejected");
  if (failure) throw (failure as PromiseRejectedResult).reason;
}

export function createMediaEventHandler(deps: MediaEventHandlerDeps) {
  const { repository, stats } = deps;
  // ctx.log: every line about the record carries the request ID and traceparent the event came with.
  return async function handle(event: AnyEventEnvelope, ctx: Pick<MessageContext, "log">): Promise<HandleOutcome> {
    const log = ctx.log;
    if (deps.onlyPartners && !deps.onlyPartners.has(event.partnerId)) return "skipped";
    let claimed: MediaJob[];
    if (event.aggregateType === "listing") {
      const listingId = aggregateIdOf(event, "listingId");
      const current = await repository.listingVersion(listingId);
      if (current === null || event.version < current) {
        stats.staleEvents++;
        stats.eventsHandled++;
        return "skipped";
      }
      claimed = await repository.claimListingPhotos(listingId, deps.leaseMs);
    } else if (event.aggregateType === "broker") {
      const brokerId = aggregateIdOf(event, "brokerId");
      const current = await repository.brokerVersion(brokerId);
      if (current === null || event.version < current) {
        stats.staleEvents++;
        stats.eventsHandled++;
        return "skipped";
      }
      const avatar = await repository.claimAvatar(brokerId, deps.leaseMs);
      claimed = avatar ? [avatar] : [];
    } else {
      throw new PermanentError(`unexpected aggregate type ${event.aggregateType} on a media topic`);
    }
    if (claimed.length > 0) log.info("processing images", { count: claimed.length });
    await runAll(deps.jobs, claimed, log);
    stats.eventsHandled++;
    return "handled";
  };
}
