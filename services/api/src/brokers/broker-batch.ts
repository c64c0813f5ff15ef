// Many broker PUTs in one request (POST /partner/v1/brokers/batch). Each item is its own unit with exactly the
// single PUT's semantics: upsertBroker's checks (brokerBodyProblems) and plan (planBroker: merge, compare), and a
// write storing exactly the rows upsertBroker stores for that plan (row, lists, history, outbox event).
//
// What is batched is only the cost around those steps: one read of all the batch's brokers (findBrokers), and
// the writes of all items that change something set-based in ONE transaction (broker-batch-writes.ts): one
// statement per kind of write for the whole batch, and one commit. An item that lost a race (created or changed
// concurrently since the read) is run again alone through upsertBroker, which reads again and merges onto the
// newer version. If the shared transaction fails as a whole, nothing of it is kept and each of its items is run
// again alone in its own transaction, exactly as its single PUT, so each gets its own answer.
import type { BrokerBody } from "@pss/contracts";
import type postgres from "postgres";
import { validationError, retryTransaction } from "@pss/http-kit";
import type { ItemOutcome } from "../batch/batch-items.ts";
import type { WriteSource } from "../records/record-scope.ts";
import type { RecordScope } from "../records/record-scope.ts";
import { writeBrokerPlans, type PlannedBrokerWrite } from "./broker-batch-writes.ts";
import { brokerBodyProblems } from "./broker-document.ts";
import { defaultOfficeId, findBrokers } from "./broker-repository.ts";
import {
  planBroker,
  plannedBrokerQuality,
  plannedPhone,
  upsertBroker,
  type BrokerUpsertResult,
} from "./broker-service.ts";

export interface BrokerBatchItem {
  externalId: string;
  body: BrokerBody;
}

export async function upsertBrokerBatch(
  sql: postgres.Sql,
  scope: RecordScope,
  items: BrokerBatchItem[],
  source: WriteSource,
): Promise<ItemOutcome<BrokerUpsertResult>[]> {
  const out = new Array<ItemOutcome<BrokerUpsertResult> | undefined>(items.length);
  const valid: number[] = [];
  items.forEach((item, i) => {
    const problems = brokerBodyProblems(item.body, "");
    if (problems.length) out[i] = { error: validationError(problems) };
    else valid.push(i);
  });
  const alone = async (i: number): Promise<ItemOutcome<BrokerUpsertResult>> => {
    try {
      const { externalId, body } = items[i]!;
      return { ok: await retryTransaction(() => sql.begin((tx) => upsertBroker(tx, scope, externalId, body, source))) };
    } catch (error) {
      return { error };
    }
  };

  const stored = await findBrokers(
    sql,
    scope,
    valid.map((i) => items[i]!.externalId),
  );
  const writes: (PlannedBrokerWrite & { i: number })[] = [];
  for (const i of valid) {
    const { externalId, body } = items[i]!;
    const plan = planBroker(stored.get(externalId) ?? null, body);
    if (plan.kind === "noChange")
      out[i] = {
        ok: {
          brokerId: plan.current.id,
          created: false,
          changed: false,
          phone: plannedPhone(plan),
          quality: plannedBrokerQuality(plan),
        },
      };
    else writes.push({ i, externalId, plan });
  }

  let written: (BrokerUpsertResult | null)[] | null = null;
  if (writes.length) {
    try {
      const officeId = writes.some((w) => w.plan.kind === "create")
        ? await defaultOfficeId(sql, scope.partnerId)
        : null;
      written = await retryTransaction(() => sql.begin((tx) => writeBrokerPlans(tx, scope, writes, source, officeId)));
    } catch {
      written = null; // rolled back whole: each item is run alone below
    }
  }
  for (let k = 0; k < writes.length; k++) {
    const result = written?.[k];
    out[writes[k]!.i] = result ? { ok: result } : await alone(writes[k]!.i);
  }
  return out as ItemOutcome<BrokerUpsertResult>[];
}
