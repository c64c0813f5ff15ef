// The HTTP application as a factory: tests drive it with app.handle() or a real listener.
import type { Client as OpenSearchClient } from "@opensearch-project/opensearch";
import { Elysia } from "elysia";
import { registerFormats } from "@pss/contracts";
import { createHealthRoutes, type Logger, type ReadinessCheck } from "@pss/service-kit";
import type postgres from "postgres";
import type { Authenticator, Principal } from "./auth/authenticator.ts";
import { createBrokerRoutes } from "./brokers/broker-routes.ts";
import { createBuyerPlugin } from "./buyers/buyer-plugin.ts";
import { DEFAULT_SEARCH_ALIAS } from "@pss/contracts";
import { renderDocsPage } from "./docs/docs-page.ts";
import { buildOpenApiDocument, type OpenApiDocument } from "./docs/openapi.ts";
import { mapError } from "./http/error-mapper.ts";
import { MethodNotAllowedError, NotFoundError, PayloadTooLargeError, RateLimitedError, UnauthorizedError, UnsupportedMediaTypeError, BadRequestError } from "./http/errors.ts";
import type { RateLimiter } from "./http/rate-limiter.ts";
import { createLeadCountRoutes, type LeadCountOptions } from "./lead-counts/lead-count-routes.ts";
import { createLeadIntakeRoutes, type LeadIntakeOptions } from "./leads/lead-routes.ts";
import { createListingRoutes } from "./listings/listing-routes.ts";
import { createMediaRoutes } from "./media/media-routes.ts";
import { createPartnerContext } from "./partner/partner-context.ts";
import { ErrorMessages } from "@pss/contracts";

export interface AppDeps {
  sql: postgres.Sql;
  logger: Logger;
  authenticator: Authenticator;
  partnerRateLimiter: RateLimiter;
  publicBaseUrl: string;
  maxBodyBytes: number;
  readiness: Record<string, ReadinessCheck>;
  isStopping?: () => boolean;
  /** Where the media service stores image variants; GET /media/<name> serves them. */
  mediaDir?: string;
  /** Buyers' search reads this alias; without a client, search answers 503 (pages still work). */
  opensearch?: OpenSearchClient;
  searchAlias?: string;
  /** Lead intake limits and proxy trust, and the lead-count cache; absent = no limits, no cache. */
  leads?: LeadIntakeOptions & LeadCountOptions;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** The path of an absolute request URL without building a URL object (this runs on every request). */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const query = url.indexOf("?", start);
  return query < 0 ? url.slice(start) : url.slice(start, query);
}
const PARTNER_PREFIX = "/partner/v1/";
/** Under the partner prefix but readable without a key: integrators read the contract before onboarding. */
const PUBLIC_PARTNER_PATHS = new Set(["/partner/v1/openapi.json"]);

export function createApp(deps: AppDeps) {
  registerFormats();
  const requestIds = new WeakMap<Request, string>();
  const principals = new WeakMap<Request, Principal>();
  const started = new WeakMap<Request, number>();
  const partner = createPartnerContext({ sql: deps.sql, publicBaseUrl: deps.publicBaseUrl }, principals);
  let routeTable: { method: string; pattern: RegExp }[] | null = null;

  const app = new Elysia({ normalize: false })
    .onRequest(async ({ request, set }) => {
      if (deps.logger.enabled("info")) started.set(request, performance.now());
      const incoming = request.headers.get("x-request-id");
      const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
      requestIds.set(request, requestId);
      set.headers["x-request-id"] = requestId;

      const path = pathOf(request.url);
      if (path.startsWith(PARTNER_PREFIX) && !PUBLIC_PARTNER_PATHS.has(path)) {
        // Exactly "Bearer <key>"; the same 401 whatever was wrong.
        const header = request.headers.get("authorization");
        const key = header?.startsWith("Bearer ") ? header.slice(7) : null;
        const principal = key ? await deps.authenticator.authenticate(key) : null;
        if (!principal) throw new UnauthorizedError();
        principals.set(request, principal);
        const retryAfter = await deps.partnerRateLimiter.check(principal.keyId);
        if (retryAfter !== null) throw new RateLimitedError(retryAfter);
      }
      const length = Number(request.headers.get("content-length") ?? 0);
      if (length > deps.maxBodyBytes) throw new PayloadTooLargeError(deps.maxBodyBytes);
    })
    .onParse(async ({ request, contentType }) => {
      if (!/^application\/json\s*(;|$)/i.test(contentType || request.headers.get("content-type") || "")) throw new UnsupportedMediaTypeError();
      const text = await request.text();
      // Bodies sent without Content-Length (chunked) are measured after reading.
      if (Buffer.byteLength(text) > deps.maxBodyBytes) throw new PayloadTooLargeError(deps.maxBodyBytes);
      try {
        return JSON.parse(text);
      } catch {
        throw new BadRequestError(ErrorMessages.malformedJson);
      }
    })
    .onError(({ code, error, request, set }) => {
      let failure: unknown = error;
      if (code === "NOT_FOUND") {
        const path = new URL(request.url).pathname;
        routeTable ??= app.routes.map((r) => ({ method: r.method, pattern: new RegExp(`^${r.path.replace(/:[^/]+/g, "[^/]+")}$`) }));
        const allowed = [...new Set(routeTable.filter((r) => r.pattern.test(path)).map((r) => r.method))];
        failure = allowed.length ? new MethodNotAllowedError(allowed) : new NotFoundError();
      }
      const requestId = requestIds.get(request) ?? crypto.randomUUID();
      const mapped = mapError({ code, error: failure, requestId, logger: deps.logger });
      set.status = mapped.status;
      set.headers["x-request-id"] = requestId;
      set.headers["content-type"] = "application/json";
      for (const [k, v] of Object.entries(mapped.headers ?? {})) set.headers[k] = v;
      return mapped.body;
    })
    .onAfterResponse(({ request, set }) => {
      if (!deps.logger.enabled("info")) return;
      const begun = started.get(request);
      deps.logger.info("request", {
        requestId: requestIds.get(request),
        method: request.method,
        path: pathOf(request.url),
        status: set.status,
        durationMs: begun ? Math.round((performance.now() - begun) * 10) / 10 : undefined,
        partnerId: principals.get(request)?.partnerId,
      });
    })
    .use(createHealthRoutes({ service: "api", checks: deps.readiness, isStopping: deps.isStopping }))
    .group("/partner/v1", (group) =>
      group
        .get("/health", () => ({ status: "success" as const, timestamp: new Date().toISOString() }), {
          detail: { summary: "Verify reachability and credentials; changes nothing" },
        })
        .use(createBrokerRoutes(partner))
        .use(createListingRoutes(partner))
        .use(createLeadCountRoutes(partner, deps.leads ?? {}))
        .get("/openapi.json", () => openApi(), { detail: { summary: "This API's OpenAPI 3.1 document" } }),
    )
    .use(createMediaRoutes({ mediaDir: deps.mediaDir }))
    .use(createBuyerPlugin({ sql: deps.sql, opensearch: deps.opensearch ?? null, searchAlias: deps.searchAlias ?? DEFAULT_SEARCH_ALIAS, publicBaseUrl: deps.publicBaseUrl }))
    .use(createLeadIntakeRoutes({ sql: deps.sql, logger: deps.logger, ...deps.leads }))
    .get("/docs", () => new Response(renderDocsPage(openApi()), { headers: { "content-type": "text/html; charset=utf-8" } }));

  let openApiDocument: OpenApiDocument | null = null;
  const openApi = (): OpenApiDocument =>
    (openApiDocument ??= buildOpenApiDocument(app.routes as never, {
      serverUrl: deps.publicBaseUrl,
      documentedPrefixes: ["/partner/v1/", "/v1/"],
      publicPaths: [...PUBLIC_PARTNER_PATHS],
    }));
  return app;
}

export type App = ReturnType<typeof createApp>;
