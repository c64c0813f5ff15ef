// Many broker PUTs in one request (POST /partner/v1/brokers/batch). Each item runs the single PUT's own
// upsertBroker (checks, merge and compare, version-guarded write, lists, history, outbox event). What is batched
// is the transaction: all items share one, their statements pipelined on one connection, committed once. If it
// fails as a whole, nothing of it is kept and each item is run again alone in its own transaction, exactly as its
// single PUT, so each gets its own answer.
import type { BrokerBody } from "@pss/contracts";
import type postgres from "postgres";
import { validationError } from "../http/errors.ts";
import type { ItemOutcome } from "../listings/listing-batch.ts";
import type { WriteSource } from "../listings/listing-service.ts";
import type { RecordScope } from "../records/record-scope.ts";
import { retryTransaction } from "../records/transaction-retry.ts";
import { brokerBodyProblems } from "./broker-document.ts";
import { upsertBroker, type BrokerUpsertResult } from "./broker-service.ts";

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
  const writes: number[] = [];
  items.forEach((item, i) => {
    const problems = brokerBodyProblems(item.body, "");
    if (problems.length) out[i] = { error: validationError(problems) };
    else writes.push(i);
  });
  const one = (tx: postgres.TransactionSql, i: number) =>
    upsertBroker(tx, scope, items[i]!.externalId, items[i]!.body, source);

  let written: BrokerUpsertResult[] | null = null;
  if (writes.length) {
    try {
      written = await retryTransaction(() => sql.begin((tx) => Promise.all(writes.map((i) => one(tx, i)))));
    } catch {
      written = null; // rolled back whole: each item is run alone below
    }
  }
  for (let k = 0; k < writes.length; k++) {
    const i = writes[k]!;
    if (written) out[i] = { ok: written[k]! };
    else {
      try {
        out[i] = { ok: await retryTransaction(() => sql.begin((tx) => one(tx, i))) };
      } catch (error) {
        out[i] = { error };
      }
    }
  }
  return out as ItemOutcome<BrokerUpsertResult>[];
}
