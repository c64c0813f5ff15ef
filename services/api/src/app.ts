// The HTTP application as a factory: tests drive it with app.handle() or a real listener.
import type { Client as OpenSearchClient } from "@opensearch-project/opensearch";
import { Elysia, StatusMap } from "elysia";
import { registerFormats } from "@pss/contracts";
import {
  activeSpanRecording,
  annotateRequest,
  disabledTracing,
  traceIdOf,
  type HttpMetrics,
  type Logger,
  type SecretBox,
  type Tracing,
} from "@pss/service-kit";
import type postgres from "postgres";
import type { Authenticator } from "./auth/authenticator.ts";
import { createBrokerRoutes } from "./brokers/broker-routes.ts";
import { createBuyerPlugin } from "./buyers/buyer-plugin.ts";
import { wantsHtml } from "./buyers/pages/html.ts";
import { notFoundPage } from "./buyers/pages/status-pages.ts";
import { DEFAULT_SEARCH_ALIAS } from "@pss/contracts";
import { renderDocsPage } from "./docs/docs-page.ts";
import { buildOpenApiDocument, OPENAPI_EXAMPLES, withExamples, type OpenApiDocument } from "./docs/openapi.ts";
import { mapError } from "./http/error-mapper.ts";
import { edgeViolation, pathOf, withAbsoluteUrl } from "./http/edge.ts";
import { createIdempotencyLayer } from "./http/idempotency.ts";
import { MethodNotAllowedError, NotFoundError } from "./http/errors.ts";
import { parseJsonRequest } from "./http/json-body.ts";
import { createRequestTraces, traceResponseHeaders } from "./http/request-trace.ts";
import type { RateLimiter } from "./http/rate-limiter.ts";
import { storedError, type RequestLog } from "./request-log/request-log.ts";
import { createLeadCountRoutes, type LeadCountOptions } from "./lead-counts/lead-count-routes.ts";
import { createLeadIntakeRoutes, type LeadIntakeOptions } from "./leads/lead-routes.ts";
import { createListingRoutes } from "./listings/listing-routes.ts";
import { createFeedRoutes } from "./feed/feed-routes.ts";
import { createReportRoutes } from "./reports/report-routes.ts";
import { createStatsRoutes } from "./stats/stats-routes.ts";
import type { StatsRecorder } from "./stats/stats-recorder.ts";
import { createMediaRoutes, type MediaRoutesDeps } from "./media/media-routes.ts";
import { createHealthRoutes } from "./partner/health-routes.ts";
import { createPartnerAuth, createPartnerContext, principalIn } from "./partner/partner-context.ts";
import {
  createListingWriteGroups,
  DEFAULT_WRITE_GROUP_CONCURRENCY,
  type WriteGroupStats,
} from "./listings/listing-write-groups.ts";
import { createPreviewLinks, type PreviewLinks } from "./previews/preview-links.ts";
import { createPortalUserRoutes } from "./portal-users/portal-user-routes.ts";
import { createPreviewRoutes } from "./previews/preview-routes.ts";
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
  /** Where the media service stores image variants, and how GET /media/<name> serves them. */
  media?: MediaRoutesDeps;
  /** Buyers' search reads this alias; without a client, search answers 503 (pages still work). */
  opensearch?: OpenSearchClient;
  searchAlias?: string;
  /** Lead intake limits and proxy trust, and the lead-count cache; absent = no limits, no cache. */
  leads?: LeadIntakeOptions & LeadCountOptions;
  /** Preview links of test records; absent = one-hour links signed with the key kept in PostgreSQL. */
  previews?: PreviewLinks;
  /** URLs per sitemap file (default 50,000, the protocol's maximum); tests make it small. */
  sitemapPageSize?: number;
  /** Counts buyers' page views and search impressions (stats/stats-recorder.ts); absent = no counting. */
  buyerStats?: StatsRecorder;
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

/** The record a route's path names, as span attributes: what an operator searches traces by. */
function recordAttributes(params: Record<string, string | undefined> | undefined): Record<string, string> {
  const attributes: Record<string, string> = {};
  if (!params) return attributes;
  if (params.externalListingId) attributes["pss.external_listing_id"] = params.externalListingId;
  if (params.externalBrokerId) attributes["pss.external_broker_id"] = params.externalBrokerId;
  if (params.serviceListingId) attributes["pss.listing_id"] = params.serviceListingId;
  return attributes;
}

/** Paths of the JSON APIs and files: never an HTML error page, whatever the client accepts. */
const isApiPath = (path: string) => /^\/(v1|partner|media|healthz|readyz|livez)(\/|$)/.test(path);
/**
 * The batch upserts (batch/batch-route.ts), by matched route and method: PUT /partner/v1/listings/batch is the
 * single upsert of the listing whose external ID is "batch", under the text rules like any other.
 */
const BATCH_ROUTES = new Set(["POST /partner/v1/listings/batch", "POST /partner/v1/brokers/batch"]);
const isBatchRoute = (method: string, route: string) => BATCH_ROUTES.has(`${method} ${route}`);
/** Under the partner prefix but readable without a key: integrators read the contract before onboarding. */
const PUBLIC_PARTNER_PATHS = ["/partner/v1/openapi.json"];

/** A body that broke a rule while being parsed. Kept until the route's guard has run, so 401 comes first. */
class BodyRejection {
  constructor(readonly error: unknown) {}
}
function throwBodyRejection(body: unknown): void {
  if (body instanceof BodyRejection) throw body.error;
}

/** Whether a request announces a body: a non-zero Content-Length, or a chunked one. */
function hasBody(request: Request): boolean {
  const length = request.headers.get("content-length");
  return (length !== null && length.trim() !== "0") || request.headers.has("transfer-encoding");
}

export function createApp(appDeps: AppDeps) {
  registerFormats();
  // POSTs with an Idempotency-Key run in one transaction with their key (http/idempotency.ts): every route gets the
  // layer's transaction-aware pool in place of the plain one.
  const idempotency = createIdempotencyLayer({
    sql: appDeps.sql,
    secrets: appDeps.webhookSecrets,
    retentionHours: appDeps.idempotencyRetentionHours,
  });
  const deps: AppDeps = { ...appDeps, sql: idempotency.sql };
  const traces = createRequestTraces(deps.logger, deps.tracing ?? disabledTracing("pss-api"));
  const started = new WeakMap<Request, number>();
  /** Requests no route served (404/405 by unrouted()): one route label value, whatever the path. */
  const unmatched = new WeakSet<Request>();
  const timed = deps.httpMetrics !== undefined || deps.logger.enabled("info") || deps.requestLog !== undefined;
  /** The error answers of 4xx requests, for the request log. */
  const clientErrors = new WeakMap<Request, unknown>();
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
      listingWrites,
    },
    partnerAuth,
    traces,
  );
  let routeTable: { method: string; fixed: boolean; pattern: RegExp }[] | null = null;
  // One intake for the JSON route and the listing page's form: the same limiter instances count both.
  const leadIntake = { sql: deps.sql, logger: deps.logger, traces, idempotency, ...deps.leads };

  /** 405 with Allow when the path exists for other methods, else 404. */
  const unrouted = (request: Request) => {
    unmatched.add(request);
    const path = pathOf(request.url);
    routeTable ??= app.routes
      .filter((r) => !r.path.endsWith("*"))
      .map((r) => ({
        method: r.method,
        fixed: !r.path.includes(":"),
        pattern: new RegExp(`^${r.path.replace(/:[^/]+/g, "[^/]+")}$`),
      }));
    // A path a route names literally (/partner/v1/listings/batch) answers with that route's methods, as the
    // document lists them, not also with those of a parameter route it happens to match (/listings/{id}).
    const matching = routeTable.filter((r) => r.pattern.test(path));
    const literal = matching.filter((r) => r.fixed);
    const allowed = [...new Set((literal.length ? literal : matching).map((r) => r.method))];
    return allowed.length ? new MethodNotAllowedError(allowed) : new NotFoundError();
  };
  let handle: (request: Request) => Promise<Response>;
  const app = new Elysia({ normalize: false, systemRouter: false })
    .onRequest(({ request, set }) => {
      // HTTP/1.0 without Host: route the same request under an absolute URL, so nothing downstream guesses.
      const absolute = withAbsoluteUrl(request);
      if (absolute) return handle(absolute);
      if (timed) started.set(request, performance.now());
      // Decided now, answered on every response (errors included), carried by the events this request writes.
      Object.assign(set.headers, traceResponseHeaders(traces.of(request)));
      const violation = edgeViolation(request, deps.maxBodyBytes);
      if (violation) throw violation;
    })
    // The request's span is named by its route template, and carries the record its path names.
    .onTransform(({ request, route, params }) => {
      if (activeSpanRecording())
        annotateRequest(recordAttributes(params as Record<string, string | undefined>), {
          method: request.method,
          route,
        });
    })
    .onParse(async ({ request, route }) => {
      // An action without a body (POST …/test, …/retry, a DELETE such as /partner/v1/test-data): nothing to parse,
      // so no Content-Type is needed.
      if ((request.method === "POST" || request.method === "DELETE") && !hasBody(request)) return null;
      try {
        // A batch applies the text rules to each item's body itself: one bad item must not refuse the others.
        return await parseJsonRequest(request, deps.maxBodyBytes, {
          textRules: !isBatchRoute(request.method, route),
        });
      } catch (err) {
        return new BodyRejection(err);
      }
    })
    .onError(({ code, error, request, set }) => {
      let failure: unknown = error;
      if (code === "NOT_FOUND") failure = unrouted(request);
      // A browser that opens a page that does not exist gets a page, not JSON (the APIs keep their JSON).
      if (failure instanceof NotFoundError && wantsHtml(request) && !isApiPath(pathOf(request.url))) {
        return notFoundPage("Page", `${deps.publicBaseUrl}${pathOf(request.url)}`);
      }
      const trace = traces.of(request);
      const mapped = mapError({ code, error: failure, requestId: trace.requestId, logger: traces.logger(request) });
      set.status = mapped.status;
      Object.assign(set.headers, traceResponseHeaders(trace));
      set.headers["content-type"] = "application/json";
      for (const [k, v] of Object.entries(mapped.headers ?? {})) set.headers[k] = v;
      if (deps.requestLog && mapped.status >= 400 && mapped.status < 500) clientErrors.set(request, mapped.body);
      return mapped.body;
    })
    .onAfterResponse((context) => {
      const { request, set, route } = context;
      const begun = started.get(request);
      const status = typeof set.status === "number" ? set.status : set.status ? (StatusMap[set.status] ?? 200) : 200;
      const principal = principalIn(context);
      if (deps.requestLog && principal && begun !== undefined) {
        const query = request.url.indexOf("?");
        deps.requestLog.record({
          at: performance.timeOrigin + begun,
          partnerId: principal.partnerId,
          mode: principal.mode,
          keyId: principal.keyId,
          method: request.method,
          path: pathOf(request.url) + (query >= 0 ? request.url.slice(query) : ""),
          status,
          durationMs: Math.round((performance.now() - begun) * 10) / 10,
          requestId: traces.of(request).requestId,
          error: status >= 400 && status < 500 ? storedError(clientErrors.get(request)) : null,
        });
      }
      if (deps.httpMetrics && begun !== undefined) {
        deps.httpMetrics.observe({
          method: request.method,
          route: unmatched.has(request) ? null : route,
          status,
          seconds: (performance.now() - begun) / 1000,
        });
      }
      if (!deps.logger.enabled("info")) return;
      const trace = traces.of(request);
      deps.logger.info("request", {
        requestId: trace.requestId,
        traceId: traceIdOf(trace.traceparent),
        traceparent: trace.traceparent,
        method: request.method,
        path: pathOf(request.url),
        status: set.status,
        durationMs: begun ? Math.round((performance.now() - begun) * 10) / 10 : undefined,
        partnerId: principal?.partnerId,
      });
    })
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
        .use(createListingRoutes(partner))
        .use(createFeedRoutes(partner))
        .use(createReportRoutes(partner))
        .use(createStatsRoutes(partner))
        .use(createLeadCountRoutes(partner, deps.leads ?? {}))
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
          throw unrouted(request);
        },
        { detail: { hide: true } },
      ),
    )
    .use(createMediaRoutes({ logger: deps.logger, ...deps.media }))
    .use(
      createPreviewRoutes({
        sql: deps.sql,
        authenticator: deps.authenticator,
        previews,
        publicBaseUrl: deps.publicBaseUrl,
      }),
    )
    .use(
      createBuyerPlugin({
        sql: deps.sql,
        opensearch: deps.opensearch ?? null,
        searchAlias: deps.searchAlias ?? DEFAULT_SEARCH_ALIAS,
        publicBaseUrl: deps.publicBaseUrl,
        logger: deps.logger,
        leads: leadIntake,
        maxBodyBytes: deps.maxBodyBytes,
        sitemapPageSize: deps.sitemapPageSize,
        stats: deps.buyerStats,
      }),
    )
    .use(
      new Elysia({ name: "lead-intake" })
        .onTransform(({ body }) => throwBodyRejection(body))
        .use(createLeadIntakeRoutes(leadIntake)),
    )
    .get(
      "/docs",
      () => new Response(renderDocsPage(openApi()), { headers: { "content-type": "text/html; charset=utf-8" } }),
    );

  handle = (request) => app.handle(request);

  let openApiDocument: OpenApiDocument | null = null;
  const openApi = (): OpenApiDocument =>
    (openApiDocument ??= buildOpenApiDocument(app.routes, {
      serverUrl: deps.publicBaseUrl,
      documentedPrefixes: ["/partner/v1/", "/v1/"],
      publicPaths: PUBLIC_PARTNER_PATHS,
      // Served from memory: never 503.
      dependencyFreePaths: PUBLIC_PARTNER_PATHS,
    }));
  return app;
}

export type App = ReturnType<typeof createApp>;
