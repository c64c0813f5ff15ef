// The partner API as a factory: tests drive it with app.handle() or a real listener. Buyers' pages, search, inquiry
// intake, view counting, previews and images are the marketplace's (services/marketplace); the request handling both
// share (edge limits, JSON bodies, errors, traces, 404/405, the request log) is @pss/http-kit's pipeline.
import { Elysia } from "elysia";
import { registerFormats } from "@pss/contracts";
import { disabledTracing, type HttpMetrics, type Logger, type SecretBox, type Tracing } from "@pss/service-kit";
import type postgres from "postgres";
import {
  createHttpPipeline,
  createIdempotencyLayer,
  createPreviewLinks,
  createRequestTraces,
  pathOf,
  throwBodyRejection,
  type AnsweredRequest,
  type Authenticator,
  type PreviewLinks,
  type RateLimiter,
  type RequestTraces,
} from "@pss/http-kit";
import { PUBLIC_API_OPERATIONS } from "@pss/marketplace/public-api-docs";
import { createBrokerRoutes } from "./brokers/broker-routes.ts";
import { renderDocsPage } from "./docs/docs-page.ts";
import { buildOpenApiDocument, OPENAPI_EXAMPLES, withExamples, type OpenApiDocument } from "./docs/openapi.ts";
import { storedError, type RequestLog } from "./request-log/request-log.ts";
import { createLeadCountRoutes, type LeadCountOptions } from "./lead-counts/lead-count-routes.ts";
import { createListingRoutes } from "./listings/listing-routes.ts";
import { createFeedRoutes } from "./feed/feed-routes.ts";
import { createReportRoutes } from "./reports/report-routes.ts";
import { createStatsRoutes } from "./stats/stats-routes.ts";
import { createHealthRoutes } from "./health/health-routes.ts";
import { createPartnerAuth, createPartnerContext, principalIn } from "./partner/partner-context.ts";
import {
  createListingWriteGroups,
  DEFAULT_WRITE_GROUP_CONCURRENCY,
  type WriteGroupStats,
} from "./listings/listing-write-groups.ts";
import { createPortalUserRoutes } from "./portal-users/portal-user-routes.ts";
import { createTestModeRoutes } from "./test-mode/test-mode-routes.ts";
import { DEFAULT_RESEND_DAILY_BUDGET } from "./webhooks/webhook-resend.ts";
import { createWebhookRoutes } from "./webhooks/webhook-routes.ts";

export interface AppDeps {
  sql: postgres.Sql;
  logger: Logger;
  authenticator: Authenticator;
  partnerRateLimiter: RateLimiter;
  publicBaseUrl: string;
  maxBodyBytes: number;
  /** Requests by route template and status (/healthz, /readyz and /metrics are served on API_HEALTH_PORT, not here). */
  httpMetrics?: HttpMetrics;
  /** The lead-count cache; absent = no cache. */
  leadCounts?: LeadCountOptions;
  /** Preview links of test records; absent = one-hour links signed with the key kept in PostgreSQL. */
  previews?: PreviewLinks;
  /** Encrypts webhook signing secrets (WEBHOOK_SECRET_KEY; the webhooks service decrypts them to sign). */
  webhookSecrets: SecretBox;
  /** Webhook deliveries a partner may re-send per audience in 24 hours (default DEFAULT_RESEND_DAILY_BUDGET). */
  webhookResendDailyBudget?: number;
  /** How long the answer to a POST sent with an Idempotency-Key is kept (default 24 hours). */
  idempotencyRetentionHours?: number;
  /** Where every request a key authenticated is recorded for the partner portal; absent = not recorded. */
  requestLog?: RequestLog;
  /**
   * Group writes of single listing PUTs in flight at once (WRITE_GROUP_CONCURRENCY; listing-write-groups.ts): PUTs
   * that arrive while that many are being written are written together; 0: each PUT alone. Default
   * DEFAULT_WRITE_GROUP_CONCURRENCY, as in production.
   */
  writeGroupConcurrency?: number;
  /** Sees the size of every group written (a metric). */
  writeGroupStats?: WriteGroupStats;
  /**
   * The service's spans: requests served through serveTraced (main.ts) run in their server span; this one decides
   * the IDs of requests handled without it (app.handle). Absent: nothing recorded.
   */
  tracing?: Tracing;
}

/**
 * The batch upserts (batch/batch-route.ts), by matched route and method: PUT /partner/v1/listings/batch is the
 * single upsert of the listing whose external ID is "batch", under the text rules like any other.
 */
const BATCH_ROUTES = new Set(["POST /partner/v1/listings/batch", "POST /partner/v1/brokers/batch"]);
const isBatchRoute = (method: string, route: string) => BATCH_ROUTES.has(`${method} ${route}`);
/** Under the partner prefix but readable without a key: integrators read the contract before onboarding. */
const PUBLIC_PARTNER_PATHS = ["/partner/v1/openapi.json"];

/** Records each request a key authenticated, with its answer (a 4xx's error body), in the partner's request log. */
function requestLogRecorder(requestLog: RequestLog, traces: RequestTraces) {
  return (context: object, answered: AnsweredRequest) => {
    const principal = principalIn(context);
    if (!principal) return;
    const { request } = context as { request: Request };
    const query = request.url.indexOf("?");
    requestLog.record({
      at: answered.at,
      partnerId: principal.partnerId,
      mode: principal.mode,
      keyId: principal.keyId,
      method: request.method,
      path: pathOf(request.url) + (query >= 0 ? request.url.slice(query) : ""),
      status: answered.status,
      durationMs: answered.durationMs,
      requestId: traces.of(request).requestId,
      error: answered.status >= 400 && answered.status < 500 ? storedError(answered.clientError) : null,
    });
  };
}

export function createApp(appDeps: AppDeps) {
  registerFormats();
  // POSTs with an Idempotency-Key run in one transaction with their key (idempotency.ts in @pss/http-kit): every
  // route gets the layer's transaction-aware pool in place of the plain one.
  const idempotency = createIdempotencyLayer({
    sql: appDeps.sql,
    secrets: appDeps.webhookSecrets,
    retentionHours: appDeps.idempotencyRetentionHours,
  });
  const deps: AppDeps = { ...appDeps, sql: idempotency.sql };
  const traces = createRequestTraces(deps.logger, deps.tracing ?? disabledTracing("pss-api"));
  const pipeline = createHttpPipeline({
    logger: deps.logger,
    traces,
    maxBodyBytes: deps.maxBodyBytes,
    httpMetrics: deps.httpMetrics,
    // A batch applies the text rules to each item's body itself: one bad item must not refuse the others.
    textRules: (method, route) => !isBatchRoute(method, route),
    logFields: (context) => ({ partnerId: principalIn(context)?.partnerId }),
    // Every request a key authenticated, with its answer, for the partner portal's "API requests".
    onAnswered: deps.requestLog && requestLogRecorder(deps.requestLog, traces),
  });
  const previews =
    deps.previews ?? createPreviewLinks({ sql: deps.sql, publicBaseUrl: deps.publicBaseUrl, ttlSeconds: 3600 });
  // The partner routes' guard (partner-context.ts): derives `partner`, the caller, for every route in the groups below.
  const partnerAuth = createPartnerAuth({ authenticator: deps.authenticator, rateLimiter: deps.partnerRateLimiter });
  const listingWrites = createListingWriteGroups(
    { sql: deps.sql, stats: deps.writeGroupStats },
    { concurrency: deps.writeGroupConcurrency ?? DEFAULT_WRITE_GROUP_CONCURRENCY },
  );
  const partner = createPartnerContext(
    {
      sql: deps.sql,
      publicBaseUrl: deps.publicBaseUrl,
      previews,
      rateLimiter: deps.partnerRateLimiter,
      idempotency,
    },
    partnerAuth,
    traces,
  );

  const app = pipeline
    .install(new Elysia({ normalize: false, systemRouter: false }))
    .get("/partner/v1/openapi.json", () => openApi(), {
      detail: { summary: "This API's OpenAPI 3.1 document", ...withExamples(OPENAPI_EXAMPLES) },
    })
    // Every partner route lives in this group; its guard runs before any handler in it, whatever the URL looked like.
    .group("/partner/v1", (group) =>
      group
        .use(partnerAuth)
        .onTransform(({ body }) => throwBodyRejection(body))
        .use(createHealthRoutes(partner))
        .use(createBrokerRoutes(partner))
        .use(createListingRoutes(partner, listingWrites))
        .use(createFeedRoutes(partner))
        .use(createReportRoutes(partner))
        .use(createStatsRoutes(partner))
        .use(createLeadCountRoutes(partner, deps.leadCounts ?? {}))
        .use(createTestModeRoutes(partner))
        .use(createPortalUserRoutes(partner))
        .use(
          createWebhookRoutes(partner, {
            secrets: deps.webhookSecrets,
            resendDailyBudget: deps.webhookResendDailyBudget ?? DEFAULT_RESEND_DAILY_BUDGET,
          }),
        ),
    )
    // Anything else under the prefix passes the same guard: no key, 401; with a key, 404 or 405.
    .group("/partner/v1", (group) =>
      group.use(partnerAuth).all(
        "/*",
        ({ request }) => {
          throw pipeline.unrouted(request);
        },
        { detail: { hide: true } },
      ),
    )
    .get(
      "/docs",
      () => new Response(renderDocsPage(openApi()), { headers: { "content-type": "text/html; charset=utf-8" } }),
    );

  let openApiDocument: OpenApiDocument | null = null;
  // The document covers the partner routes and the public JSON routes partners' integrations call (search, a
  // listing, a broker, an inquiry), which the marketplace serves under the same base URL: their declarations are
  // the marketplace's (public-api-docs.ts), so the document and the routes cannot drift apart.
  const openApi = (): OpenApiDocument =>
    (openApiDocument ??= buildOpenApiDocument([...app.routes, ...PUBLIC_API_OPERATIONS], {
      serverUrl: deps.publicBaseUrl,
      documentedPrefixes: ["/partner/v1/", "/v1/"],
      publicPaths: PUBLIC_PARTNER_PATHS,
      // Served from memory: never 503.
      dependencyFreePaths: PUBLIC_PARTNER_PATHS,
    }));
  return app;
}

export type App = ReturnType<typeof createApp>;
