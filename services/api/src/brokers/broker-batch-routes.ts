// POST /partner/v1/brokers/batch: many broker PUTs in one request (batch/batch-route.ts).
import { BrokerBatchBody, BrokerBatchResponse, BrokerBody } from "@pss/contracts";
import { BATCH_ABOUT } from "../batch/batch-docs.ts";
import { createBatchRoute } from "../batch/batch-route.ts";
import type { PartnerContext } from "../partner/partner-context.ts";
import { brokerDryRunAnswer, brokerPutAnswer } from "./broker-answers.ts";
import { BROKER_EXAMPLES } from "./broker-docs.ts";
import { upsertBrokerBatch } from "./broker-batch.ts";
import { dryRunBroker } from "./broker-service.ts";

export function createBrokerBatchRoutes(ctx: PartnerContext) {
  return createBatchRoute(ctx, {
    record: "broker",
    itemBody: BrokerBody,
    batchBody: BrokerBatchBody,
    response: BrokerBatchResponse,
    description: BATCH_ABOUT,
    examples: BROKER_EXAMPLES["POST /brokers/batch"],
    dryRun: async (sql, scope, externalId, body: BrokerBody) =>
      brokerDryRunAnswer(await dryRunBroker(sql, scope, externalId, body)),
    upsert: upsertBrokerBatch,
    answer: brokerPutAnswer,
  });
}
