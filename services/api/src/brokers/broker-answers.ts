// The answer of a stored broker PUT, built in one place: the single PUT and every item of a batch answer with it
// (with the warnings and quality score of the broker as written).
import type { BrokerPutResponse, DryRunResponse } from "@pss/contracts";
import type { ItemAnswer } from "../batch/batch-items.ts";
import type { PartnerContext } from "../partner/partner-context.ts";
import type { RecordScope } from "../records/record-scope.ts";
import { plannedBrokerQuality, type BrokerPlan, type BrokerUpsertResult } from "./broker-service.ts";

export async function brokerPutAnswer(
  ctx: PartnerContext,
  scope: RecordScope,
  result: BrokerUpsertResult,
): Promise<ItemAnswer<BrokerPutResponse>> {
  return {
    httpStatus: result.created ? 201 : 200,
    changed: result.changed,
    body: {
      status: "success",
      message: result.created ? "Broker created" : "Broker updated",
      serviceBrokerId: result.brokerId,
      serviceProfileUrl: await ctx.brokerUrl(scope, result.brokerId),
      ...result.quality,
    },
  };
}

export function brokerDryRunAnswer(plan: BrokerPlan): DryRunResponse {
  const outcome = plan.kind === "create" ? "wouldCreate" : plan.kind === "update" ? "wouldUpdate" : "noChange";
  return {
    status: "success",
    dryRun: true,
    outcome,
    changedPaths: plan.changes.map((c) => c.path),
    ...plannedBrokerQuality(plan),
  };
}
