// Create-or-update of a listing (and its inline broker) in one transaction, with its outbox event.
import { ErrorMessages, Topics, type ListingBody } from "@pss/contracts";
import type postgres from "postgres";
import { upsertBroker } from "../brokers/broker-service.ts";
import { findBrokerIdByExternalId } from "../brokers/broker-repository.ts";
import { NotFoundError, validationError } from "../http/errors.ts";
import { appendEvent } from "../outbox/outbox-writer.ts";
import { contentHash, type Json } from "../records/merge-patch.ts";
import { applyListingBody, listingBodyProblems, missingOnCreate, type ListingDocument } from "./listing-document.ts";
import { findListing, insertListing, loadForWrite, recordStatusChange, replacePhotos, updateListing, type StoredListing } from "./listing-repository.ts";
import { createListingAtomically, updateListingAtomically } from "./listing-writes.ts";

export interface ListingUpsertResult {
  listingId: number;
  created: boolean;
  changed: boolean;
}

export function listingEventPayload(args: { id: number; externalId: string; brokerId: string; document: ListingDocument; createdAt: Date; updatedAt: Date }) {
  const d = args.document;
  return {
    listingId: args.id,
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
    createdAt: args.createdAt.toISOString(),
    updatedAt: args.updatedAt.toISOString(),
  };
}

const hashOf = (document: ListingDocument, brokerId: string) => contentHash({ brokerId, document } as unknown as Json);

/** Resolves the broker the body names (creating or updating an inline one); null when it names none. */
async function resolveBroker(tx: postgres.TransactionSql, partnerId: string, body: ListingBody): Promise<string | null> {
  if (body.broker) {
    const { externalBrokerId, ...brokerBody } = body.broker;
    return (await upsertBroker(tx, partnerId, externalBrokerId, brokerBody, "broker.")).brokerId;
  }
  if (body.brokerExternalId !== undefined) {
    const found = await findBrokerIdByExternalId(tx, partnerId, body.brokerExternalId);
    if (!found) throw new NotFoundError(ErrorMessages.brokerNotFound);
    return found.id;
  }
  return null;
}

/** The event payload before the database assigns ID and timestamps (filled in by the write statement). */
function payloadWithoutDbFields(externalId: string, brokerId: string, document: ListingDocument) {
  const { listingId: _id, createdAt: _c, updatedAt: _u, ...rest } = listingEventPayload({ id: 0, externalId, brokerId, document, createdAt: new Date(0), updatedAt: new Date(0) });
  return rest;
}

const MAX_WRITE_ATTEMPTS = 8;

export async function upsertListing(sql: postgres.Sql, partnerId: string, externalId: string, body: ListingBody): Promise<ListingUpsertResult> {
  const problems = listingBodyProblems(body);
  if (problems.length) throw validationError(problems);
  // An inline broker must be written in the same transaction as the listing: the general path.
  if (body.broker) return upsertInTransaction(sql, partnerId, externalId, body);

  for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
    const { listing: current, namedBrokerId } = await loadForWrite(sql, partnerId, externalId, body.brokerExternalId);
    if (namedBrokerId === null) throw new NotFoundError(ErrorMessages.brokerNotFound);

    if (!current) {
      const document = applyListingBody(null, body);
      const missing = missingOnCreate(document, namedBrokerId !== undefined);
      if (missing.length) throw validationError(missing);
      const brokerId = namedBrokerId!;
      const created = await createListingAtomically(sql, { partnerId, externalId, brokerId, document, hash: hashOf(document, brokerId), payload: payloadWithoutDbFields(externalId, brokerId, document) });
      if (created) return { listingId: created.id, created: true, changed: true };
      continue; // Created concurrently by another request: read again and update.
    }

    const brokerId = namedBrokerId ?? current.brokerId;
    const document = applyListingBody(current.document, body);
    const hash = hashOf(document, brokerId);
    if (hash.equals(current.contentHash)) return { listingId: current.id, created: false, changed: false };
    const written = await updateListingAtomically(sql, {
      id: current.id,
      expectedVersion: current.version,
      partnerId,
      brokerId,
      previous: current,
      document,
      hash,
      payload: payloadWithoutDbFields(externalId, brokerId, document),
    });
    if (written) return { listingId: current.id, created: false, changed: true };
    // Changed concurrently since we read it: merge again onto the newer version.
  }
  throw new Error(`listing ${externalId} kept changing under ${MAX_WRITE_ATTEMPTS} attempts`);
}

async function upsertInTransaction(sql: postgres.Sql, partnerId: string, externalId: string, body: ListingBody): Promise<ListingUpsertResult> {
  return sql.begin(async (tx) => {
    const namedBrokerId = await resolveBroker(tx, partnerId, body);
    let current: StoredListing | null = await findListing(tx, partnerId, externalId, true);

    if (!current) {
      const document = applyListingBody(null, body);
      const missing = missingOnCreate(document, namedBrokerId !== null);
      if (missing.length) throw validationError(missing);
      const brokerId = namedBrokerId!;
      const inserted = await insertListing(tx, { partnerId, externalId, brokerId, document, hash: hashOf(document, brokerId) });
      if (inserted) {
        await replacePhotos(tx, inserted.id, document.photos ?? [], []);
        await recordStatusChange(tx, inserted.id, null, document.status);
        await appendEvent(tx, {
          topic: Topics.listingEvents,
          type: "listing.upserted",
          aggregateType: "listing",
          aggregateId: String(inserted.id),
          version: 1,
          partnerId,
          payload: listingEventPayload({ id: inserted.id, externalId, brokerId, document, createdAt: inserted.createdAt, updatedAt: inserted.createdAt }),
        });
        return { listingId: inserted.id, created: true, changed: true };
      }
      // A concurrent request created it between our read and insert: continue as an update.
      current = await findListing(tx, partnerId, externalId, true);
      if (!current) throw new Error("listing vanished after a conflicting insert");
    }

    const brokerId = namedBrokerId ?? current.brokerId;
    const document = applyListingBody(current.document, body);
    const hash = hashOf(document, brokerId);
    if (hash.equals(current.contentHash)) return { listingId: current.id, created: false, changed: false };

    const { version, updatedAt } = await updateListing(tx, current, brokerId, document, hash);
    await replacePhotos(tx, current.id, document.photos ?? [], current.photos);
    if (document.status !== current.document.status) await recordStatusChange(tx, current.id, current.document.status, document.status);
    await appendEvent(tx, {
      topic: Topics.listingEvents,
      type: "listing.upserted",
      aggregateType: "listing",
      aggregateId: String(current.id),
      version,
      partnerId,
      payload: listingEventPayload({ id: current.id, externalId, brokerId, document, createdAt: current.createdAt, updatedAt }),
    });
    return { listingId: current.id, created: false, changed: true };
  });
}
