// Many listing PUTs in one request (POST /partner/v1/listings/batch). Each item is its own unit with exactly the
// single PUT's semantics, because it runs the single PUT's own checks and plan: listingBodyProblems, planListing
// (merge, compare, 404/400), plannedListingQuality; its write stores exactly the rows the single PUT's write
// (writeListingPlan) stores for that plan: the create or version-guarded update with its photos, status and
// change history and outbox event. upsertListing itself runs an item where the shared fast path does not fit.
//
// What is batched is only the cost around those steps:
// - one read of all listings and named brokers (loadManyForWrite) instead of one per item;
// - the writes of all items that change something set-based in ONE transaction (listing-batch-writes.ts): one
//   statement per kind of write for the whole batch, not per item, and one commit (one WAL flush).
// If that transaction fails as a whole (a foreign key violated by a broker deleted meanwhile, a deadlock that
// kept recurring), nothing of it is kept and every item in it is run again alone through upsertListing, so each
// gets exactly its own answer; an item that lost a race (created or changed concurrently since the read) is run
// through upsertListing too, as the single PUT re-reads and merges again.
//
// Inline brokers: such an item is run through upsertListing (its own transaction with the broker) in request
// order before the shared write. A referencing item resolves a broker created inline only by an EARLIER item,
// as the same PUTs sent one by one would.
import type { ListingBody } from "@pss/contracts";
import type postgres from "postgres";
import { validationError } from "../http/errors.ts";
import type { RecordScope } from "../records/record-scope.ts";
import { retryTransaction } from "../records/transaction-retry.ts";
import { listingBodyProblems } from "./listing-document.ts";
import { loadManyForWrite } from "./listing-repository.ts";
import { allocateListingIds, writeListingPlans, type PlannedWrite } from "./listing-batch-writes.ts";
import {
  planListing,
  plannedListingQuality,
  upsertListing,
  type ListingUpsertResult,
  type Loaded,
  type WriteSource,
} from "./listing-service.ts";

export interface ListingBatchItem {
  externalId: string;
  body: ListingBody;
  /** Who writes this item and its request's trace, when not the batch's (PUTs written together: listing-write-groups.ts). */
  source?: WriteSource;
}

/** An item's outcome: the single PUT's result, or the error it would have thrown. */
export type ItemOutcome<T> = { ok: T } | { error: unknown };

const settle = async <T>(work: () => Promise<T>): Promise<ItemOutcome<T>> => {
  try {
    return { ok: await work() };
  } catch (error) {
    return { error };
  }
};

export async function upsertListingBatch(
  sql: postgres.Sql,
  scope: RecordScope,
  items: ListingBatchItem[],
  source: WriteSource,
): Promise<ItemOutcome<ListingUpsertResult>[]> {
  const out = new Array<ItemOutcome<ListingUpsertResult> | undefined>(items.length);
  const inline: number[] = [];
  const plain: number[] = [];
  items.forEach((item, i) => {
    const problems = listingBodyProblems(item.body);
    if (problems.length) out[i] = { error: validationError(problems) };
    else (item.body.broker ? inline : plain).push(i);
  });

  const named = (i: number) => items[i]!.body.brokerExternalId;
  const namedIds = [...new Set(plain.map(named).filter((id): id is string => id !== undefined))];
  // Which named brokers existed before any inline broker of this batch was written, and which item first writes one.
  const existedBefore =
    inline.length && namedIds.length ? (await loadManyForWrite(sql, scope, [], namedIds)).brokers : null;
  const firstInline = new Map<string, number>();
  for (const i of inline)
    if (!firstInline.has(items[i]!.body.broker!.externalBrokerId))
      firstInline.set(items[i]!.body.broker!.externalBrokerId, i);
  const sourceOf = (i: number) => items[i]!.source ?? source;
  for (const i of inline)
    out[i] = await settle(() => upsertListing(sql, scope, items[i]!.externalId, items[i]!.body, sourceOf(i)));

  const loaded = await loadManyForWrite(
    sql,
    scope,
    plain.map((i) => items[i]!.externalId),
    namedIds,
  );
  const writes: (PlannedWrite & { i: number })[] = [];
  for (const i of plain) {
    const ref = named(i);
    // The single PUT's load (loadForWrite), from the shared read: the listing, the named broker and its phone.
    const load: Loaded = {
      listing: loaded.listings.get(items[i]!.externalId) ?? null,
      named: undefined,
      namedPhone: null,
    };
    if (ref !== undefined) {
      const broker = loaded.brokers.get(ref);
      const visible = existedBefore === null || existedBefore.has(ref) || (firstInline.get(ref) ?? Infinity) < i;
      load.named = broker !== undefined && visible ? { id: broker.id, externalId: ref } : null;
      load.namedPhone = broker !== undefined && visible ? broker.phone : null;
    }
    try {
      const plan = planListing(load.listing, load.named, items[i]!.body);
      if (plan.kind === "noChange")
        out[i] = {
          ok: {
            listingId: plan.current.id,
            created: false,
            changed: false,
            quality: plannedListingQuality(plan, load),
          },
        };
      else
        writes.push({
          i,
          externalId: items[i]!.externalId,
          plan,
          quality: plannedListingQuality(plan, load),
          source: items[i]!.source,
        });
    } catch (error) {
      out[i] = { error };
    }
  }

  let written: (ListingUpsertResult | null)[] | null = null;
  if (writes.length > 0) {
    try {
      const ids = await allocateListingIds(sql, writes.filter((w) => w.plan.kind === "create").length);
      let next = 0;
      for (const w of writes) if (w.plan.kind === "create") w.newListingId = ids[next++];
      written = await retryTransaction(() => sql.begin((tx) => writeListingPlans(tx, scope, writes, source)));
    } catch {
      written = null; // rolled back whole: each item is run alone below
    }
  }
  for (let k = 0; k < writes.length; k++) {
    const { i } = writes[k]!;
    const result = written?.[k];
    out[i] = result
      ? { ok: result }
      : await settle(() => upsertListing(sql, scope, items[i]!.externalId, items[i]!.body, sourceOf(i)));
  }
  return out as ItemOutcome<ListingUpsertResult>[];
}
