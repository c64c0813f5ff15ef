// Group commit of single listing PUTs: PUTs that arrive while earlier ones are being written are written together,
// as the items of one batch (listing-batch.ts: one read for all of them, one set-based write, ONE commit), and each
// is answered with its own result once that commit has returned, that is once it is durable (synchronous_commit
// stays on). Nothing waits for a group to fill: a PUT that finds a write slot free is written at once, alone, by the
// single PUT's own path (upsertListing), so a quiet API answers exactly as before; only while `concurrency` writes
// are in flight do PUTs queue, and the next free slot takes every PUT queued for that partner and mode (up to
// MAX_GROUP). So the group grows with the load, and the database does one read, one write statement per kind and one
// WAL flush per group instead of per PUT.
//
// Each item keeps the single PUT's semantics because the batch path runs the single PUT's own checks, plan and
// writes (listing-batch.ts); its change history names its own request and key, its event carries its own request's
// trace. A group that fails as a whole (a foreign key violated by a broker deleted meanwhile) is rolled back and
// every item in it is written again alone; an item that lost a race (changed concurrently since the read) is
// written again alone too, as the single PUT re-reads and merges onto the newer version. Two PUTs of the same
// listing never share a group (the later one waits for the next); concurrent PUTs of one listing race as they
// always did. PUTs with an inline broker are written alone (their broker write is a transaction of its own).
import type { ListingBody } from "@pss/contracts";
import { activeContext, inContext, withoutSpan } from "@pss/service-kit";
import type postgres from "postgres";
import type { RecordScope } from "../records/record-scope.ts";
import { upsertListingBatch } from "./listing-batch.ts";
import { upsertListing, type ListingUpsertResult, type WriteSource } from "./listing-service.ts";

/** Items of one group at most (the batch route's limit: the set-based statements are sized for it). */
export const MAX_GROUP = 100;

/**
 * WRITE_GROUP_CONCURRENCY's default: two group writes in flight per process. One leaves the database idle while
 * the API prepares the next group; more make the groups smaller (docs/benchmarks.md, "Issue 43").
 */
export const DEFAULT_WRITE_GROUP_CONCURRENCY = 2;

export interface ListingWriteGroups {
  /** The single PUT's write (upsertListing), written together with whatever PUTs wait beside it. */
  upsert(scope: RecordScope, externalId: string, body: ListingBody, source: WriteSource): Promise<ListingUpsertResult>;
}

export interface WriteGroupStats {
  /** PUTs written, and the groups (of one or more) they were written in. */
  onGroup?(size: number): void;
}

interface Job {
  scope: RecordScope;
  externalId: string;
  body: ListingBody;
  source: WriteSource;
  /** The request's tracing context: a PUT written alone is written within its own trace, as before. */
  context: ReturnType<typeof activeContext>;
  resolve(result: ListingUpsertResult): void;
  reject(error: unknown): void;
}

/**
 * `concurrency`: group writes in flight at once in this process (each holds one database connection while it
 * writes); 0 writes every PUT alone as it comes (no grouping).
 */
export function createListingWriteGroups(
  deps: { sql: postgres.Sql; stats?: WriteGroupStats },
  opts: { concurrency: number; maxGroup?: number },
): ListingWriteGroups {
  const { sql } = deps;
  const maxGroup = Math.max(1, Math.min(opts.maxGroup ?? MAX_GROUP, MAX_GROUP));
  // Queued PUTs per partner and mode, in arrival order; Map order is the order scopes first queued.
  const queues = new Map<string, Job[]>();
  let inFlight = 0;

  function next(): Job[] | null {
    for (const [key, queue] of queues) {
      const taken: Job[] = [];
      const ids = new Set<string>();
      const left: Job[] = [];
      for (const job of queue) {
        // A second PUT of the same listing waits for the next group: arrival order per listing is kept.
        if (taken.length < maxGroup && !ids.has(job.externalId)) {
          ids.add(job.externalId);
          taken.push(job);
        } else left.push(job);
      }
      if (left.length) queues.set(key, left);
      else queues.delete(key);
      return taken;
    }
    return null;
  }

  function pump(): void {
    while (inFlight < opts.concurrency) {
      const group = next();
      if (!group) return;
      inFlight++;
      // A group of several belongs to no single trace (each event carries its own request's traceparent); one PUT
      // alone is written in its request's trace, with the spans it always had.
      const [first, ...rest] = group;
      const run = () => write(group);
      void (first && rest.length === 0 ? inContext(first.context, run) : withoutSpan(run)).then((settle) => {
        // The slot is free before the callers go on: a PUT they send next finds it free, as after any write.
        inFlight--;
        settle();
        pump();
      });
    }
  }

  /** Writes a group; what it returns answers each PUT (called once the slot is released). Never rejects. */
  async function write(group: Job[]): Promise<() => void> {
    deps.stats?.onGroup?.(group.length);
    const [first, ...rest] = group;
    if (!first) return () => {};
    if (rest.length === 0) {
      return upsertListing(sql, first.scope, first.externalId, first.body, first.source).then(
        (result) => () => first.resolve(result),
        (error: unknown) => () => first.reject(error),
      );
    }
    try {
      const outcomes = await upsertListingBatch(
        sql,
        first.scope,
        group.map((j) => ({ externalId: j.externalId, body: j.body, source: j.source })),
        first.source,
      );
      return () =>
        group.forEach((job, k) => {
          const o = outcomes[k];
          if (o && "ok" in o) job.resolve(o.ok);
          else job.reject(o?.error ?? new Error("no outcome for a PUT of the group"));
        });
    } catch (error) {
      // Not an item's failure (the read itself failed: the database away): every PUT of the group fails with it.
      return () => {
        for (const job of group) job.reject(error);
      };
    }
  }

  return {
    upsert(scope, externalId, body, source) {
      // Alone, as before: grouping off, an inline broker (a transaction of its own), or a free slot and nothing
      // queued (a quiet API writes each PUT as it comes, with no wait for company).
      if (opts.concurrency <= 0 || body.broker) return upsertListing(sql, scope, externalId, body, source);
      return new Promise<ListingUpsertResult>((resolve, reject) => {
        const key = `${scope.partnerId}:${scope.mode}`;
        const queue = queues.get(key);
        const job = { scope, externalId, body, source, context: activeContext(), resolve, reject };
        if (queue) queue.push(job);
        else queues.set(key, [job]);
        pump();
      });
    },
  };
}
