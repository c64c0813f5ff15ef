// Create-or-update of a broker inside a caller's transaction, so a listing can carry its broker inline.
import { Topics, type BrokerBody } from "@pss/contracts";
import type postgres from "postgres";
import { validationError } from "../http/errors.ts";
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

export async function upsertBroker(tx: postgres.TransactionSql, partnerId: string, externalId: string, body: BrokerBody, pathRoot = ""): Promise<BrokerUpsertResult> {
  const problems = brokerBodyProblems(body, pathRoot);
  if (problems.length) throw validationError(problems);

  let current: StoredBroker | null = await findBroker(tx, partnerId, externalId, true);
  if (!current) {
    const document = applyBrokerBody(null, body);
    const hash = contentHash(document as unknown as Json);
    const officeId = await defaultOfficeId(tx, partnerId);
    const inserted = await insertBroker(tx, { partnerId, externalId, officeId, document, hash });
    if (inserted) {
      await replaceBrokerLists(tx, inserted.id, document, null);
      await appendEvent(tx, {
        topic: Topics.brokerEvents,
        type: "broker.upserted",
        aggregateType: "broker",
        aggregateId: inserted.id,
        version: 1,
        partnerId,
        payload: brokerEventPayload(inserted.id, externalId, officeId, document),
      });
      return { brokerId: inserted.id, created: true, changed: true };
    }
    // A concurrent request created it between our read and insert: continue as an update.
    current = await findBroker(tx, partnerId, externalId, true);
    if (!current) throw new Error("broker vanished after a conflicting insert");
  }

  const document = applyBrokerBody(current.document, body);
  const hash = contentHash(document as unknown as Json);
  if (hash.equals(current.contentHash)) return { brokerId: current.id, created: false, changed: false };

  const { version } = await updateBroker(tx, current, document, hash);
  await replaceBrokerLists(tx, current.id, document, current.document);
  await appendEvent(tx, {
    topic: Topics.brokerEvents,
    type: "broker.upserted",
    aggregateType: "broker",
    aggregateId: current.id,
    version,
    partnerId,
    payload: brokerEventPayload(current.id, externalId, current.officeId, document),
  });
  return { brokerId: current.id, created: false, changed: true };
}
