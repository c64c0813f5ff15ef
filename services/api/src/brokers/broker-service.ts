// Create-or-update of a broker inside a caller's transaction, so a listing can carry its broker inline.
import { Topics, type BrokerBody } from "@pss/contracts";
import type { EventTrace } from "@pss/service-kit";
import type postgres from "postgres";
import { validationError } from "../http/errors.ts";
import { ContendedWriteError } from "../records/transaction-retry.ts";
import { appendEvent } from "../outbox/outbox-writer.ts";
import { contentHash, type Json } from "../records/merge-patch.ts";
import { applyBrokerBody, brokerBodyProblems, type BrokerDocument } from "./broker-document.ts";
import { defaultOfficeId, findBroker, insertBroker, replaceBrokerLists, updateBroker, type StoredBroker } from "./broker-repository.ts";

export interface BrokerUpsertResult {
  brokerId: string;
  created: boolean;
  changed: boolean;
}

export function brokerEventPayload(id: string, externalId: string, officeId: number, doc: BrokerDocument) {
  // E-mail addresses stay off the bus: no consumer needs them to index or process media.
  return {
    brokerId: id,
    externalId,
    officeId,
    name: doc.name,
    phone: doc.phone ?? null,
    avatarUrl: doc.avatarUrl ?? null,
    profile: doc.profile ?? {},
    licenses: doc.licenses ?? [],
    serviceAreas: doc.serviceAreas ?? [],
  };
}

/** Read, merge, write without row locks for the read: a write guarded by the version read, retried on a lost race. */
const MAX_WRITE_ATTEMPTS = 8;

/** `pathRoot`: prefix of problem paths (an inline broker's are "broker.…"); `trace`: stored with the event. */
export async function upsertBroker(
  tx: postgres.TransactionSql,
  partnerId: string,
  externalId: string,
  body: BrokerBody,
  opts: { pathRoot?: string; trace?: EventTrace } = {},
): Promise<BrokerUpsertResult> {
  const pathRoot = opts.pathRoot ?? "";
  const problems = brokerBodyProblems(body, pathRoot);
  if (problems.length) throw validationError(problems);

  for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
    const current: StoredBroker | null = await findBroker(tx, partnerId, externalId);
    if (!current) {
      const document = applyBrokerBody(null, body);
      const hash = contentHash(document as unknown as Json);
      const officeId = await defaultOfficeId(tx, partnerId);
      const inserted = await insertBroker(tx, { partnerId, externalId, officeId, document, hash });
      // null: a concurrent request created it between our read and insert; merge onto it as an update.
      if (!inserted) continue;
      await replaceBrokerLists(tx, inserted.id, document, null);
      await appendEvent(tx, {
        topic: Topics.brokerEvents,
        type: "broker.upserted",
        aggregateType: "broker",
        aggregateId: inserted.id,
        version: 1,
        partnerId,
        payload: brokerEventPayload(inserted.id, externalId, officeId, document),
        trace: opts.trace,
      });
      return { brokerId: inserted.id, created: true, changed: true };
    }

    const document = applyBrokerBody(current.document, body);
    const hash = contentHash(document as unknown as Json);
    if (hash.equals(current.contentHash)) return { brokerId: current.id, created: false, changed: false };

    const updated = await updateBroker(tx, current, document, hash);
    if (!updated) continue;
    // The UPDATE holds the row until commit: the lists below are replaced by one writer at a time.
    await replaceBrokerLists(tx, current.id, document, current.document);
    await appendEvent(tx, {
      topic: Topics.brokerEvents,
      type: "broker.upserted",
      aggregateType: "broker",
      aggregateId: current.id,
      version: updated.version,
      partnerId,
      payload: brokerEventPayload(current.id, externalId, updated.officeId, document),
      trace: opts.trace,
    });
    return { brokerId: current.id, created: false, changed: true };
  }
  throw new ContendedWriteError();
}
