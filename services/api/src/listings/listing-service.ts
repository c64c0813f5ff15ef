// Create-or-update of a listing. The write itself is one atomic statement (listing-writes.ts); a listing with
// an inline broker runs it inside the transaction that also writes the broker. No row is locked to read it:
// writes are guarded by the version read and retried on a lost race, and the whole write is retried after a
// deadlock or serialization failure (records/transaction-retry.ts).
//
// The merge and compare step (planListing) is shared with the dry run (dryRunListing): both run the same checks
// in the same order and compute the same document, so a dry run answers exactly what the PUT then does.
import { ErrorMessages, type DryRunResponse, type FieldChange, type ListingBody, type Quality } from "@pss/contracts";
import { inChildSpan, POSTGRES_SPAN, type EventTrace } from "@pss/service-kit";
import type postgres from "postgres";
import { dryRunBroker, upsertBroker } from "../brokers/broker-service.ts";
import { NotFoundError, validationError } from "../http/errors.ts";
import { diffDocuments, forHistory } from "../records/changes.ts";
import { contentHash, type Json } from "../records/merge-patch.ts";
import type { RecordScope, WriteOrigin } from "../records/record-scope.ts";
import { applyListingBody, listingBodyProblems, missingOnCreate, type ListingDocument } from "./listing-document.ts";
import { ContendedWriteError, retryTransaction } from "../records/transaction-retry.ts";
import { findListing, loadForWrite, type StoredListing } from "./listing-repository.ts";
import { createListingAtomically, updateListingAtomically } from "./listing-writes.ts";
import { listingDocumentQuality } from "../quality/record-quality.ts";

export interface ListingUpsertResult {
  listingId: number;
  created: boolean;
  changed: boolean;
  /** The warnings of the listing as written: photos already processed keep their state, new URLs are pending. */
  quality: Quality;
}

const hashOf = (document: ListingDocument, brokerId: string) => contentHash({ brokerId, document } as unknown as Json);

const MAX_WRITE_ATTEMPTS = 8;

/** The broker a body names: undefined when it names none, null when that broker does not exist in this scope. */
export type NamedBroker = { id: string; externalId: string } | null | undefined;

/**
 * `namedPhone`: the phone of the broker the body names, for the dry run's warnings. `newListingId`: an ID the read
 * allocated for the listing if it is created (the event is built in JS and needs it; listing-writes.ts).
 */
export type Loaded = {
  listing: StoredListing | null;
  named: NamedBroker;
  namedPhone?: string | null;
  newListingId?: number;
};

/** What a listing PUT body does to the stored listing (or to nothing). */
export type ListingPlan =
  | { kind: "create"; document: ListingDocument; brokerId: string; hash: Buffer; changes: FieldChange[] }
  | {
      kind: "update";
      current: StoredListing;
      document: ListingDocument;
      brokerId: string;
      hash: Buffer;
      changes: FieldChange[];
    }
  | { kind: "noChange"; current: StoredListing; changes: [] };

/** Field paths include brokerExternalId, the reference a partner sees (the internal broker ID is part of the hash). */
function listingChanges(
  before: { brokerExternalId: string; document: ListingDocument } | null,
  after: { brokerExternalId: string; document: ListingDocument },
): FieldChange[] {
  return diffDocuments(before ? { brokerExternalId: before.brokerExternalId, ...before.document } : undefined, {
    brokerExternalId: after.brokerExternalId,
    ...after.document,
  });
}

/** The merge and compare of a listing PUT; throws its 404 (unknown broker) and its 400 (create without required parts). */
export function planListing(current: StoredListing | null, named: NamedBroker, body: ListingBody): ListingPlan {
  if (named === null) throw new NotFoundError(ErrorMessages.brokerNotFound);
  if (!current) {
    const document = applyListingBody(null, body);
    const missing = missingOnCreate(document, named !== undefined);
    if (missing.length) throw validationError(missing);
    const brokerId = named!.id;
    return {
      kind: "create",
      document,
      brokerId,
      hash: hashOf(document, brokerId),
      changes: listingChanges(null, { brokerExternalId: named!.externalId, document }),
    };
  }
  const brokerId = named?.id ?? current.brokerId;
  const document = applyListingBody(current.document, body);
  const hash = hashOf(document, brokerId);
  if (hash.equals(current.contentHash)) return { kind: "noChange", current, changes: [] };
  const changes = listingChanges(current, {
    brokerExternalId: named?.externalId ?? current.brokerExternalId,
    document,
  });
  return { kind: "update", current, document, brokerId, hash, changes };
}

/** Who writes (`origin`, kept in the change history) and the request's ID and traceparent (stored with the events). */
export interface WriteSource {
  origin: WriteOrigin;
  trace?: EventTrace;
}

export async function upsertListing(
  sql: postgres.Sql,
  scope: RecordScope,
  externalId: string,
  body: ListingBody,
  source: WriteSource,
): Promise<ListingUpsertResult> {
  const problems = listingBodyProblems(body);
  if (problems.length) throw validationError(problems);
  return retryTransaction(() => upsertListingOnce(sql, scope, externalId, body, source));
}

const namedBy = (id: string | null | undefined, externalId: string | undefined): NamedBroker =>
  id === undefined ? undefined : id === null ? null : { id, externalId: externalId! };

async function upsertListingOnce(
  sql: postgres.Sql,
  scope: RecordScope,
  externalId: string,
  body: ListingBody,
  source: WriteSource,
): Promise<ListingUpsertResult> {
  if (!body.broker) {
    return writeListing(sql, scope, externalId, body, source, async () => {
      const loaded = await loadForWrite(sql, scope, externalId, body.brokerExternalId, { allocateId: true });
      return {
        listing: loaded.listing,
        named: namedBy(loaded.namedBrokerId, body.brokerExternalId),
        namedPhone: loaded.namedBrokerPhone,
        newListingId: loaded.newListingId,
      };
    });
  }

  const { externalBrokerId, ...brokerBody } = body.broker;
  return sql.begin(async (tx) => {
    // If the listing is refused, the broker written here rolls back with it.
    const { brokerId, phone } = await upsertBroker(tx, scope, externalBrokerId, brokerBody, {
      ...source,
      pathRoot: "broker.",
    });
    // Read without a lock: the version-guarded write below detects a concurrent change and reads again.
    return writeListing(
      tx,
      scope,
      externalId,
      body,
      source,
      async (): Promise<Loaded> => ({
        listing: await findListing(tx, scope, externalId),
        named: { id: brokerId, externalId: externalBrokerId },
        namedPhone: phone,
      }),
    );
  });
}

/**
 * Read, merge, write: an identical result writes nothing; a lost race (created or changed concurrently since
 * the read) reads again and merges onto the newer version.
 */
async function writeListing(
  db: postgres.Sql | postgres.TransactionSql,
  scope: RecordScope,
  externalId: string,
  body: ListingBody,
  source: WriteSource,
  load: () => Promise<Loaded>,
): Promise<ListingUpsertResult> {
  for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
    const loaded = await inChildSpan("listing read", () => load(), { attributes: POSTGRES_SPAN });
    const plan = planListing(loaded.listing, loaded.named, body);
    // One statement: the row, its photos and history, its outbox event and feed drafts (listing-writes.ts), so
    // this span is both the transaction's and the outbox write's; the relay's span is its child.
    const written = await inChildSpan(
      "listing write",
      async (span) => {
        span?.setAttributes({ "pss.plan": plan.kind, "pss.attempt": attempt });
        return writeListingPlan(
          db,
          scope,
          externalId,
          plan,
          source,
          plannedListingQuality(plan, loaded),
          loaded.newListingId,
        );
      },
      { attributes: POSTGRES_SPAN },
    );
    if (written) return written;
  }
  // Lost the race every time: say so with a 503 to retry, not a 500.
  throw new ContendedWriteError();
}

/**
 * The write of one plan, as one statement: the result, or null when the race was lost (the listing was created
 * or changed concurrently since it was read) and the caller must read again. A batch writes many plans set-based
 * instead, storing the same rows (listing-batch-writes.ts). `quality` is the plan's warnings (plannedListingQuality),
 * part of the answer.
 */
export async function writeListingPlan(
  db: postgres.Sql | postgres.TransactionSql,
  scope: RecordScope,
  externalId: string,
  plan: ListingPlan,
  source: WriteSource,
  quality: Quality,
  newListingId?: number,
): Promise<ListingUpsertResult | null> {
  if (plan.kind === "noChange") return { listingId: plan.current.id, created: false, changed: false, quality };
  const { document, brokerId, hash } = plan;
  const history = { origin: source.origin, changes: forHistory(plan.changes) };
  const { trace } = source;
  if (plan.kind === "create") {
    const created = await createListingAtomically(db, {
      id: newListingId,
      scope,
      externalId,
      brokerId,
      document,
      hash,
      history,
      trace,
    });
    return created ? { listingId: created.id, created: true, changed: true, quality } : null;
  }
  const { current: stored } = plan;
  const written = await updateListingAtomically(db, {
    id: stored.id,
    expectedVersion: stored.version,
    scope,
    externalId,
    brokerId,
    previous: stored,
    document,
    hash,
    history,
    trace,
  });
  return written ? { listingId: stored.id, created: false, changed: true, quality } : null;
}

/** An inline broker the dry run would create has no ID yet: a stand-in no stored listing can reference. */
const NEW_BROKER_ID = "new";

/**
 * What a listing PUT would do now, writing and announcing nothing: the PUT's checks in the PUT's order (the same
 * 400s and 404), the inline broker's merge and compare, then the listing's. Paths of the inline broker's changes
 * are prefixed "broker.".
 */
export async function dryRunListing(
  sql: postgres.Sql,
  scope: RecordScope,
  externalId: string,
  body: ListingBody,
): Promise<DryRunResponse> {
  const problems = listingBodyProblems(body);
  if (problems.length) throw validationError(problems);

  let loaded: Loaded;
  let brokerPaths: string[] = [];
  if (body.broker) {
    const { externalBrokerId, ...brokerBody } = body.broker;
    const broker = await dryRunBroker(sql, scope, externalBrokerId, brokerBody, "broker.");
    brokerPaths = broker.changes.map((c) => `broker.${c.path}`);
    const id = broker.kind === "create" ? NEW_BROKER_ID : broker.current.id;
    const brokerDocument = broker.kind === "noChange" ? broker.current.document : broker.document;
    loaded = {
      listing: await findListing(sql, scope, externalId),
      named: { id, externalId: externalBrokerId },
      namedPhone: brokerDocument.phone ?? null,
    };
  } else {
    const read = await loadForWrite(sql, scope, externalId, body.brokerExternalId);
    loaded = {
      listing: read.listing,
      named: namedBy(read.namedBrokerId, body.brokerExternalId),
      namedPhone: read.namedBrokerPhone,
    };
  }
  const plan = planListing(loaded.listing, loaded.named, body);
  const changedPaths = [...plan.changes.map((c) => c.path), ...brokerPaths].sort();
  const outcome =
    plan.kind === "create"
      ? "wouldCreate"
      : plan.kind === "update" || brokerPaths.length > 0
        ? "wouldUpdate"
        : "noChange";
  return { status: "success", dryRun: true, outcome, changedPaths, ...plannedListingQuality(plan, loaded) };
}

/**
 * The warnings of the listing a plan leaves stored, the same for the PUT's answer and its dry run: photos already
 * processed keep their state (the write keeps the rows of unchanged URLs), new URLs are pending; the broker's
 * phone is the named broker's (or the inline broker's as written), else the current broker's.
 */
export function plannedListingQuality(plan: ListingPlan, loaded: Loaded): Quality {
  const phone = loaded.named !== undefined ? loaded.namedPhone : loaded.listing?.brokerPhone;
  if (plan.kind === "noChange") return listingDocumentQuality(plan.current.document, plan.current.photos, phone);
  return listingDocumentQuality(plan.document, loaded.listing?.photos ?? [], phone);
}
