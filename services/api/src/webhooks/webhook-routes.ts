// Partner webhook endpoints and deliveries (docs/webhooks.md). Thin: parse, call the service or repository,
// shape the answer. Every route sits in the partner group, so its guard (a valid key) has run.
import { Elysia } from "elysia";
import {
  isPageCursorText,
  WebhookReplayBody,
  WebhookReplayQueued,
  isUuid,
  WebhookDeliveryPage,
  WebhookDeliveryQuery,
  WebhookDeliveryQueued,
  WebhookEndpointBody,
  WebhookEndpointDeleted,
  WebhookEndpointPage,
  WebhookEndpointPageQuery,
  WebhookEndpointPutResponse,
  WebhookEndpointResponse,
  WebhookErrorMessages,
  WebhookRecoverQueued,
  WebhookRecoverQuery,
  WebhookSecretRotated,
  ErrorResponse,
  type DeliveredEventType,
  type WebhookDeliveryStatus,
} from "@pss/contracts";
import type { SecretBox } from "@pss/service-kit";
import { documented, withExamples, type DocumentedResponses } from "../docs/openapi.ts";
import { recordBound } from "../http/instants.ts";
import { BadRequestError, ConflictError, NotFoundError } from "../http/errors.ts";
import type { PartnerContext } from "../partner/partner-context.ts";
import { createLeadDataGuard, LEAD_DATA_UNAUTHORIZED, webhookScopeOf as scopeOf } from "./lead-data-rule.ts";
import { listDeliveries, queuePing, recoverDeliveries, retryDelivery } from "./webhook-delivery-repository.ts";
import { REPLAY_BUDGET_DOC, replayEvents } from "./webhook-replay.ts";
import { RESEND_BUDGET_DOC, type ActionOutcome } from "./webhook-resend.ts";
import {
  deleteEndpoint,
  findEndpoint,
  pageEndpoints,
  rotateSecret,
  toEndpointRecord,
} from "./webhook-endpoint-repository.ts";
import { upsertEndpoint } from "./webhook-endpoint-service.ts";
import { generateWebhookSecret } from "./webhook-secrets.ts";
import { WEBHOOK_DOCS, WEBHOOK_EXAMPLES } from "./webhook-docs.ts";

const DEFAULT_PAGE = 100;
const BAD_CURSOR = "cursor is not valid; pass nextCursor from the previous page unchanged";

function pageLimit(raw: string | undefined): number {
  // The query schema's pattern already limits it to 1-500.
  return raw === undefined ? DEFAULT_PAGE : Number(raw);
}

function endpointCursor(cursor: string | undefined): string | null {
  if (cursor === undefined) return null;
  try {
    if (!isPageCursorText(cursor)) throw new Error("not base64url");
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString());
    if (
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      parsed[0] === "e1" &&
      typeof parsed[1] === "string" &&
      /^[1-9][0-9]{0,18}$/.test(parsed[1])
    )
      return parsed[1];
  } catch {}
  throw new BadRequestError(BAD_CURSOR);
}

function unwrap<T>(outcome: ActionOutcome<T>, notFound: string): T {
  if ("notFound" in outcome) throw new NotFoundError(notFound);
  if ("endpointDisabled" in outcome) throw new ConflictError(WebhookErrorMessages.endpointDisabled);
  return outcome.ok;
}

// scopeOf: the key's partner and mode (a key sees and manages only its own mode's endpoints and deliveries), and
// whether endpoints carrying lead data are in it (lead-data-rule.ts).

/** Every webhook route states the lead-data rule's 401. */
const unauthorized = { 401: LEAD_DATA_UNAUTHORIZED } satisfies DocumentedResponses;
const endpointNotFound = { ...unauthorized, 404: WebhookErrorMessages.endpointNotFound } satisfies DocumentedResponses;

export function createWebhookRoutes(
  ctx: PartnerContext,
  deps: {
    secrets: SecretBox /** Re-sent deliveries per partner and audience in 24 hours. */;
    resendDailyBudget: number;
  },
) {
  const { sql } = ctx.deps;
  const resendOptions = { dailyBudget: deps.resendDailyBudget };
  const endpointIdOf = (raw: string | undefined) => ctx.externalId(raw, "endpointId");

  // The lead-data rule, on every route below (registered after it), before schema validation: a key without lead
  // tracking that names lead.received gets 401 whatever else is wrong, as on the lead-count routes. Endpoints
  // carrying lead data are outside such a key's scope: named by ID they answer as unknown IDs do.
  // Every POST below honours Idempotency-Key; rotate-secret's answer (the new secret) is kept encrypted.
  return ctx
    .idempotentPosts(new Elysia({ name: "webhook-routes" }), {
      sealedPaths: ["/webhook-endpoints/:endpointId/rotate-secret"],
    })
    .use(ctx.auth)
    .onTransform(createLeadDataGuard())
    .put(
      "/webhook-endpoints/:endpointId",
      async ({ params, body, set, partner }) => {
        const result = await upsertEndpoint(sql, deps.secrets, partner, endpointIdOf(params.endpointId), body);
        set.status = result.created ? 201 : 200;
        return {
          status: "success" as const,
          message: result.created ? ("Webhook endpoint created" as const) : ("Webhook endpoint updated" as const),
          endpoint: toEndpointRecord(result.endpoint),
          ...(result.secret ? { secret: result.secret } : {}),
        };
      },
      {
        body: WebhookEndpointBody,
        response: {
          200: WebhookEndpointPutResponse,
          201: WebhookEndpointPutResponse,
          400: ErrorResponse,
          401: ErrorResponse,
          409: ErrorResponse,
        },
        detail: {
          summary: "Create or update a webhook endpoint",
          ...withExamples(WEBHOOK_EXAMPLES["PUT /webhook-endpoints/:endpointId"]),
          description: WEBHOOK_DOCS["PUT /webhook-endpoints/:endpointId"],
          responses: documented({
            400: "A rule beyond the schema (see the description) is refused the same way, with details [{path, message}] naming each field that breaks it.",
            ...unauthorized,
            409: WebhookErrorMessages.tooManyEndpoints,
          }),
        },
      },
    )
    .get(
      "/webhook-endpoints/:endpointId",
      async ({ params, partner }) => {
        const endpoint = await findEndpoint(sql, scopeOf(partner), endpointIdOf(params.endpointId));
        if (!endpoint) throw new NotFoundError(WebhookErrorMessages.endpointNotFound);
        return { status: "success" as const, endpoint: toEndpointRecord(endpoint) };
      },
      {
        response: { 200: WebhookEndpointResponse },
        detail: {
          summary: "Read a webhook endpoint (never its secret), with why it is disabled if it is",
          ...withExamples(WEBHOOK_EXAMPLES["GET /webhook-endpoints/:endpointId"]),
          responses: documented({
            200: { description: "The endpoint", schema: WebhookEndpointResponse },
            ...endpointNotFound,
          }),
        },
      },
    )
    .get(
      "/webhook-endpoints",
      async ({ query, partner }) => {
        const limit = pageLimit(query.limit);
        const rows = await pageEndpoints(sql, scopeOf(partner), endpointCursor(query.cursor), limit + 1);
        const page = rows.slice(0, limit);
        const nextCursor =
          rows.length > limit
            ? Buffer.from(JSON.stringify(["e1", page[page.length - 1]!.id])).toString("base64url")
            : null;
        return { status: "success" as const, results: page.map(toEndpointRecord), nextCursor };
      },
      {
        query: WebhookEndpointPageQuery,
        response: { 200: WebhookEndpointPage },
        detail: {
          summary: "List the partner's webhook endpoints, oldest first",
          ...withExamples(WEBHOOK_EXAMPLES["GET /webhook-endpoints"]),
          responses: documented({
            200: { description: "One page; nextCursor is null on the last", schema: WebhookEndpointPage },
            ...unauthorized,
          }),
        },
      },
    )
    .delete(
      "/webhook-endpoints/:endpointId",
      async ({ params, partner }) => {
        if (!(await deleteEndpoint(sql, scopeOf(partner), endpointIdOf(params.endpointId))))
          throw new NotFoundError(WebhookErrorMessages.endpointNotFound);
        return { status: "success" as const, message: "Webhook endpoint deleted" as const };
      },
      {
        response: { 200: WebhookEndpointDeleted },
        detail: {
          summary: "Delete a webhook endpoint and its delivery history; nothing more is sent to it",
          ...withExamples(WEBHOOK_EXAMPLES["DELETE /webhook-endpoints/:endpointId"]),
          responses: documented({
            200: { description: "Deleted", schema: WebhookEndpointDeleted },
            ...endpointNotFound,
          }),
        },
      },
    )
    .post(
      "/webhook-endpoints/:endpointId/rotate-secret",
      async ({ params, partner }) => {
        const secret = generateWebhookSecret();
        const rotated = await rotateSecret(
          sql,
          scopeOf(partner),
          endpointIdOf(params.endpointId),
          deps.secrets.encrypt(secret),
        );
        if (!rotated) throw new NotFoundError(WebhookErrorMessages.endpointNotFound);
        return {
          status: "success" as const,
          secret,
          previousSecretExpiresAt: rotated.previousSecretExpiresAt.toISOString(),
        };
      },
      {
        response: { 200: WebhookSecretRotated },
        detail: {
          summary:
            "Replace the signing secret; for 24 hours every delivery is signed with both the new and the previous one",
          description: WEBHOOK_DOCS["POST /webhook-endpoints/:endpointId/rotate-secret"],
          ...withExamples(WEBHOOK_EXAMPLES["POST /webhook-endpoints/:endpointId/rotate-secret"]),
          responses: documented({
            200: { description: "The new secret", schema: WebhookSecretRotated },
            ...endpointNotFound,
          }),
        },
      },
    )
    .post(
      "/webhook-endpoints/:endpointId/test",
      async ({ params, set, partner }) => {
        const deliveryId = unwrap(
          await queuePing(sql, scopeOf(partner), endpointIdOf(params.endpointId), resendOptions),
          WebhookErrorMessages.endpointNotFound,
        );
        set.status = 202;
        return { status: "success" as const, deliveryId };
      },
      {
        response: { 202: WebhookDeliveryQueued },
        detail: {
          summary:
            "Send a ping event to the endpoint (whatever it subscribed to), signed and retried like any delivery",
          description: WEBHOOK_DOCS["POST /webhook-endpoints/:endpointId/test"],
          ...withExamples(WEBHOOK_EXAMPLES["POST /webhook-endpoints/:endpointId/test"]),
          responses: documented({
            202: { description: "Queued; the deliveries list shows its attempts", schema: WebhookDeliveryQueued },
            ...endpointNotFound,
            409: WebhookErrorMessages.endpointDisabled,
            429: RESEND_BUDGET_DOC,
          }),
        },
      },
    )
    .post(
      "/webhook-endpoints/:endpointId/recover",
      async ({ params, query, set, partner }) => {
        const recovered = unwrap(
          await recoverDeliveries(
            sql,
            scopeOf(partner),
            endpointIdOf(params.endpointId),
            recordBound(query.since),
            resendOptions,
          ),
          WebhookErrorMessages.endpointNotFound,
        );
        set.status = 202;
        return { status: "success" as const, ...recovered };
      },
      {
        query: WebhookRecoverQuery,
        response: { 202: WebhookRecoverQueued },
        detail: {
          summary: "Send again every failed delivery of the endpoint created since a time",
          description: WEBHOOK_DOCS["POST /webhook-endpoints/:endpointId/recover"],
          ...withExamples(WEBHOOK_EXAMPLES["POST /webhook-endpoints/:endpointId/recover"]),
          responses: documented({
            202: {
              description: "How many deliveries were queued, and how many the budget left failed",
              schema: WebhookRecoverQueued,
            },
            ...endpointNotFound,
            409: WebhookErrorMessages.endpointDisabled,
            429: RESEND_BUDGET_DOC,
          }),
        },
      },
    )
    .post(
      "/webhook-endpoints/:endpointId/replay",
      async ({ params, body, set, partner }) => {
        const outcome = await replayEvents(sql, scopeOf(partner), endpointIdOf(params.endpointId), body, {
          publicBaseUrl: ctx.deps.publicBaseUrl,
          ...resendOptions,
        });
        const queued = unwrap(outcome, WebhookErrorMessages.endpointNotFound);
        set.status = 202;
        return { status: "success" as const, queued };
      },
      {
        body: WebhookReplayBody,
        response: { 202: WebhookReplayQueued },
        detail: {
          summary: "Send the events of a change-feed range or a time range to this endpoint (again)",
          description: WEBHOOK_DOCS["POST /webhook-endpoints/:endpointId/replay"],
          ...withExamples(WEBHOOK_EXAMPLES["POST /webhook-endpoints/:endpointId/replay"]),
          responses: documented({
            202: { description: "How many deliveries were queued", schema: WebhookReplayQueued },
            400: "A rule beyond the schema (see the description) is refused the same way, with details [{path, message}] naming the field that breaks it; so is a range of too many events.",
            ...endpointNotFound,
            409: WebhookErrorMessages.endpointDisabled,
            429: REPLAY_BUDGET_DOC,
          }),
        },
      },
    )
    .get(
      "/webhook-deliveries",
      async ({ query, partner }) => {
        return {
          status: "success" as const,
          ...(await listDeliveries(sql, {
            scope: scopeOf(partner),
            endpointExternalId: query.endpointId,
            status: query.status as WebhookDeliveryStatus | undefined,
            eventType: query.eventType as DeliveredEventType | undefined,
            limit: pageLimit(query.limit),
            cursor: query.cursor,
          })),
        };
      },
      {
        query: WebhookDeliveryQuery,
        response: { 200: WebhookDeliveryPage },
        detail: {
          summary: "List deliveries, newest first: status, attempts with status codes and latency, and the next retry",
          ...withExamples(WEBHOOK_EXAMPLES["GET /webhook-deliveries"]),
          responses: documented({
            200: { description: "One page; nextCursor is null on the last", schema: WebhookDeliveryPage },
            ...unauthorized,
          }),
        },
      },
    )
    .post(
      "/webhook-deliveries/:deliveryId/retry",
      async ({ params, set, partner }) => {
        if (typeof params.deliveryId !== "string" || !isUuid(params.deliveryId))
          throw new BadRequestError("deliveryId must be a UUID, as the deliveries list shows it");
        const deliveryId = unwrap(
          await retryDelivery(sql, scopeOf(partner), params.deliveryId.toLowerCase(), resendOptions),
          WebhookErrorMessages.deliveryNotFound,
        );
        set.status = 202;
        return { status: "success" as const, deliveryId };
      },
      {
        response: { 202: WebhookDeliveryQueued },
        detail: {
          summary: "Send one delivery again now (same webhook-id and body), with a fresh retry schedule",
          description: WEBHOOK_DOCS["POST /webhook-deliveries/:deliveryId/retry"],
          ...withExamples(WEBHOOK_EXAMPLES["POST /webhook-deliveries/:deliveryId/retry"]),
          responses: documented({
            202: { description: "Queued", schema: WebhookDeliveryQueued },
            ...unauthorized,
            404: WebhookErrorMessages.deliveryNotFound,
            409: WebhookErrorMessages.endpointDisabled,
            429: RESEND_BUDGET_DOC,
          }),
        },
      },
    );
}
