// Create-or-update of a broker inside a caller's transaction, so a listing can carry its broker inline. The merge
// and compare step (planBroker) is the one a dry run uses too: a dry run reports what this code would write.
import { BrokerUpserted, brokerUpsertedPayload, type BrokerBody, type FieldChange, type Quality } from "@pss/contracts";
import { type EventTrace, appendEvent } from "@pss/service-kit";
import type postgres from "postgres";
import { validationError, ContendedWriteError } from "@pss/http-kit";
import { diffDocuments, forHistory } from "../records/changes.ts";
import { contentHash, type Json } from "../records/merge-patch.ts";
import type { RecordScope, WriteOrigin } from "../records/record-scope.ts";
import { applyBrokerBody, brokerBodyProblems, type BrokerDocument } from "./broker-document.ts";
import { brokerDocumentQuality, storedBrokerQuality } from "./broker-quality.ts";
import {
  defaultOfficeId,
  findBroker,
  insertBroker,
  insertBrokerHistory,
  replaceBrokerLists,
  updateBroker,
  type StoredBroker,
} from "./broker-repository.ts";

export interface BrokerUpsertResult {
  brokerId: string;
  created: boolean;
  changed: boolean;
  /** The broker's phone as written: the quality rules of its listings ask for it. */
  phone: string | null;
  /** The warnings of the broker as written (the avatar's processing kept while its URL is unchanged). */
  quality: Quality;
}

/** The warnings of what a plan leaves stored: the write and the dry run answer with the same. */
export function plannedBrokerQuality(plan: BrokerPlan): Quality {
  if (plan.kind === "noChange") return storedBrokerQuality(plan.current);
  if (plan.kind === "create") return brokerDocumentQuality(plan.document, null);
  return brokerDocumentQuality(
    plan.document,
    plan.document.avatarUrl === plan.current.document.avatarUrl ? plan.current.avatar : null,
  );
}
export const plannedPhone = (plan: BrokerPlan) =>
  (plan.kind === "noChange" ? plan.current.document.phone : plan.document.phone) ?? null;

export function brokerEventPayload(id: string, externalId: string, officeId: number, doc: BrokerDocument) {
  return brokerUpsertedPayload({ brokerId: id, externalId, officeId, document: doc });
}

/** What a broker PUT body does to the stored broker (or to nothing): the step the write and the dry run share. */
export type BrokerPlan =
  | { kind: "create"; document: BrokerDocument; hash: Buffer; changes: FieldChange[] }
  | { kind: "update"; current: StoredBroker; document: BrokerDocument; hash: Buffer; changes: FieldChange[] }
  | { kind: "noChange"; current: StoredBroker; changes: [] };

export function planBroker(current: StoredBroker | null, body: BrokerBody): BrokerPlan {
  const document = applyBrokerBody(current?.document ?? null, body);
  const hash = contentHash(document as unknown as Json);
  if (!current) return { kind: "create", document, hash, changes: diffDocuments(undefined, document) };
  if (hash.equals(current.contentHash)) return { kind: "noChange", current, changes: [] };
  return { kind: "update", current, document, hash, changes: diffDocuments(current.document, document) };
}

/** Read, merge, write without row locks for the read: a write guarded by the version read, retried on a lost race. */
const MAX_WRITE_ATTEMPTS = 8;

/**
 * `origin`: who writes (kept in the change history); `pathRoot`: prefix of problem paths (an inline broker's are
 * "broker.…"); `trace`: stored with the event.
 */
export async function upsertBroker(
  tx: postgres.TransactionSql,
  scope: RecordScope,
  externalId: string,
  body: BrokerBody,
  opts: { origin: WriteOrigin; pathRoot?: string; trace?: EventTrace },
): Promise<BrokerUpsertResult> {
  const { origin } = opts;
  const pathRoot = opts.pathRoot ?? "";
  const problems = brokerBodyProblems(body, pathRoot);
  if (problems.length) throw validationError(problems);
  const { partnerId, mode } = scope;

  for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
    const plan = planBroker(await findBroker(tx, scope, externalId), body);
    if (plan.kind === "noChange")
      return {
        brokerId: plan.current.id,
        created: false,
        changed: false,
        phone: plannedPhone(plan),
        quality: plannedBrokerQuality(plan),
      };

    if (plan.kind === "create") {
      const { document, hash } = plan;
      const officeId = await defaultOfficeId(tx, partnerId);
      const inserted = await insertBroker(tx, { scope, externalId, officeId, document, hash });
      // null: a concurrent request created it between our read and insert; merge onto it as an update.
      if (!inserted) continue;
      await replaceBrokerLists(tx, inserted.id, document, null);
      const changes = forHistory(plan.changes);
      await insertBrokerHistory(tx, { brokerId: inserted.id, version: 1, origin, changes });
      await appendEvent(
        tx,
        BrokerUpserted,
        { aggregateId: inserted.id, version: 1, partnerId, mode },
        brokerEventPayload(inserted.id, externalId, officeId, document),
        opts.trace,
        { changes },
      );
      return {
        brokerId: inserted.id,
        created: true,
        changed: true,
        phone: plannedPhone(plan),
        quality: plannedBrokerQuality(plan),
      };
    }

    const { current, document, hash } = plan;
    const updated = await updateBroker(tx, current, document, hash);
    if (!updated) continue;
    // The UPDATE holds the row until commit: the lists below are replaced by one writer at a time.
    await replaceBrokerLists(tx, current.id, document, current.document);
    const changes = forHistory(plan.changes);
    await insertBrokerHistory(tx, { brokerId: current.id, version: updated.version, origin, changes });
    await appendEvent(
      tx,
      BrokerUpserted,
      { aggregateId: current.id, version: updated.version, partnerId, mode },
      brokerEventPayload(current.id, externalId, updated.officeId, document),
      opts.trace,
      { changes },
    );
    return {
      brokerId: current.id,
      created: false,
      changed: true,
      phone: plannedPhone(plan),
      quality: plannedBrokerQuality(plan),
    };
  }
  throw new ContendedWriteError();
}

/**
 * What a broker PUT would do now, without writing or announcing anything: the same checks (the same 400s) and
 * the same merge and compare as upsertBroker. `pathRoot` prefixes problem paths of an inline broker ("broker.").
 */
export async function dryRunBroker(
  db: postgres.Sql | postgres.TransactionSql,
  scope: RecordScope,
  externalId: string,
  body: BrokerBody,
  pathRoot = "",
): Promise<BrokerPlan> {
  const problems = brokerBodyProblems(body, pathRoot);
  if (problems.length) throw validationError(problems);
  return planBroker(await findBroker(db, scope, externalId), body);
}
