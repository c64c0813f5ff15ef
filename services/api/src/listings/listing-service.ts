// Create-or-update of a listing. The write itself is one atomic statement (listing-writes.ts); a listing with
// an inline broker runs it inside the transaction that also writes the broker. No row is locked to read it:
// writes are guarded by the version read and retried on a lost race, and the whole write is retried after a
// deadlock or serialization failure (records/transaction-retry.ts).
import { ErrorMessages, type ListingBody } from "@pss/contracts";
import type { EventTrace } from "@pss/service-kit";
import type postgres from "postgres";
import { upsertBroker } from "../brokers/broker-service.ts";
import { NotFoundError, validationError } from "../http/errors.ts";
import { contentHash, type Json } from "../records/merge-patch.ts";
import { applyListingBody, listingBodyProblems, missingOnCreate, type ListingDocument } from "./listing-document.ts";
import { ContendedWriteError, retryTransaction } from "../records/transaction-retry.ts";
import { findListing, loadForWrite, type StoredListing } from "./listing-repository.ts";
import { createListingAtomically, updateListingAtomically } from "./listing-writes.ts";

export interface ListingUpsertResult {
  listingId: number;
  created: boolean;
  changed: boolean;
}

/** The event payload apart from what the database assigns (listingId, createdAt, updatedAt are added by SQL). */
export function listingEventPayload(args: { externalId: string; brokerId: string; document: ListingDocument }) {
  const d = args.document;
  return {
    externalId: args.externalId,
    brokerId: args.brokerId,
    status: d.status,
    businessType: d.businessType,
    title: d.title ?? null,
    description: d.description ?? null,
    establishedAt: d.establishedAt ?? null,
    location: d.location,
    financials: d.financials ?? {},
    property: d.property ?? {},
    financing: d.financing ?? {},
    photos: d.photos ?? [],
  };
}

const hashOf = (document: ListingDocument, brokerId: string) => contentHash({ brokerId, document } as unknown as Json);

const MAX_WRITE_ATTEMPTS = 8;

type Loaded = { listing: StoredListing | null; namedBrokerId: string | null | undefined };

/** `trace`: the request's ID and traceparent, stored with the events this write causes. */
export async function upsertListing(sql: postgres.Sql, partnerId: string, externalId: string, body: ListingBody, trace?: EventTrace): Promise<ListingUpsertResult> {
  const problems = listingBodyProblems(body);
  if (problems.length) throw validationError(problems);
  return retryTransaction(() => upsertListingOnce(sql, partnerId, externalId, body, trace));
}

async function upsertListingOnce(sql: postgres.Sql, partnerId: string, externalId: string, body: ListingBody, trace: EventTrace | undefined): Promise<ListingUpsertResult> {
  if (!body.broker) return writeListing(sql, partnerId, externalId, body, trace, () => loadForWrite(sql, partnerId, externalId, body.brokerExternalId));

  const { externalBrokerId, ...brokerBody } = body.broker;
  return sql.begin(async (tx) => {
    // If the listing is refused, the broker written here rolls back with it.
    const { brokerId } = await upsertBroker(tx, partnerId, externalBrokerId, brokerBody, { pathRoot: "broker.", trace });
    // Read without a lock: the version-guarded write below detects a concurrent change and reads again.
    return writeListing(tx, partnerId, externalId, body, trace, async (): Promise<Loaded> => ({ listing: await findListing(tx, partnerId, externalId), namedBrokerId: brokerId }));
  });
}

/**
 * Read, merge, write: an identical result writes nothing; a lost race (created or changed concurrently since
 * the read) reads again and merges onto the newer version.
 */
async function writeListing(
  db: postgres.Sql | postgres.TransactionSql,
  partnerId: string,
  externalId: string,
  body: ListingBody,
  trace: EventTrace | undefined,
  load: () => Promise<Loaded>,
): Promise<ListingUpsertResult> {
  for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
    const { listing: current, namedBrokerId } = await load();
    if (namedBrokerId === null) throw new NotFoundError(ErrorMessages.brokerNotFound);

    if (!current) {
      const document = applyListingBody(null, body);
      const missing = missingOnCreate(document, namedBrokerId !== undefined);
      if (missing.length) throw validationError(missing);
      const brokerId = namedBrokerId!;
      const payload = listingEventPayload({ externalId, brokerId, document });
      const created = await createListingAtomically(db, { partnerId, externalId, brokerId, document, hash: hashOf(document, brokerId), payload, trace });
      if (created) return { listingId: created.id, created: true, changed: true };
      continue;
    }

    const brokerId = namedBrokerId ?? current.brokerId;
    const document = applyListingBody(current.document, body);
    const hash = hashOf(document, brokerId);
    if (hash.equals(current.contentHash)) return { listingId: current.id, created: false, changed: false };
    const payload = listingEventPayload({ externalId, brokerId, document });
    const written = await updateListingAtomically(db, { id: current.id, expectedVersion: current.version, partnerId, brokerId, previous: current, document, hash, payload, trace });
    if (written) return { listingId: current.id, created: false, changed: true };
  }
  // Lost the race every time: say so with a 503 to retry, not a 500.
  throw new ContendedWriteError();
}
