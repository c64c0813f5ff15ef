// The marketplace as a factory: everything buyers reach (the HTML pages, the public JSON search, listing, broker and
// inquiry routes, sitemaps, previews of test records, images). Tests drive it with app.handle() or a real listener.
// The request handling is the partner API's own (@pss/http-kit's pipeline): the same edge limits, JSON bodies,
// error answers, traces, 404/405 and request log.
import type { Client as OpenSearchClient } from "@opensearch-project/opensearch";
import { Elysia } from "elysia";
import { DEFAULT_SEARCH_ALIAS, registerFormats } from "@pss/contracts";
import { disabledTracing, type HttpMetrics, type Logger, type Tracing } from "@pss/service-kit";
import {
  createHttpPipeline,
  createIdempotencyLayer,
  createPreviewLinks,
  createRequestTraces,
  pathOf,
  throwBodyRejection,
  type Authenticator,
  type PreviewLinks,
} from "@pss/http-kit";
import type postgres from "postgres";
import { createBuyerPlugin } from "./buyers/buyer-plugin.ts";
import { createBuyerService, type BuyerService } from "./buyers/buyer-service.ts";
import { wantsHtml } from "./buyers/pages/html.ts";
import { notFoundPage } from "./buyers/pages/status-pages.ts";
import { createLeadIntakeRoutes, type LeadIntakeOptions } from "./leads/lead-routes.ts";
import { createMediaRoutes, type MediaRoutesDeps } from "./media/media-routes.ts";
import { createPreviewRoutes } from "./previews/preview-routes.ts";
import type { StatsRecorder } from "./stats/stats-recorder.ts";
import { createSavedSearchRoutes } from "./saved-searches/saved-search-routes.ts";
import {
  createSavedSearches,
  DEFAULT_SAVED_SEARCH_SETTINGS,
  type SavedSearches,
} from "./saved-searches/saved-searches.ts";

export interface MarketplaceDeps {
  sql: postgres.Sql;
  logger: Logger;
  publicBaseUrl: string;
  maxBodyBytes: number;
  /** Requests by route template and status (/healthz, /readyz and /metrics are served on the health port). */
  httpMetrics?: HttpMetrics;
  /** Where the media service stores image variants, and how GET /media/<name> serves them. */
  media?: MediaRoutesDeps;
  /** Buyers' search reads this alias; without a client, search answers 503 (pages still work). */
  opensearch?: OpenSearchClient;
  searchAlias?: string;
  /** Lead intake limits and proxy trust; absent = no limits, nobody's X-Forwarded-For believed. */
  leads?: LeadIntakeOptions;
  /** Opens previews of test records: the owning partner's test key in Authorization (besides a signed link). */
  authenticator: Authenticator;
  /** Verifies preview links (the API hands them out); absent = links signed with the key kept in PostgreSQL. */
  previews?: PreviewLinks;
  /** URLs per sitemap file (default 50,000, the protocol's maximum); tests make it small. */
  sitemapPageSize?: number;
  /** Counts buyers' page views and search impressions (stats/stats-recorder.ts); absent = no counting. */
  stats?: StatsRecorder;
  /** How long the answer to an inquiry sent with an Idempotency-Key is kept (default 24 hours). */
  idempotencyRetentionHours?: number;
  /** Search, listings and brokers (main.ts's, which its jobs share); absent: made from the deps above. */
  buyers?: BuyerService;
  /** Saved searches (main.ts's, whose digest job runs beside); absent: defaults, without rate limits. */
  savedSearches?: SavedSearches;
  /**
   * The service's spans: requests served through serveTraced (main.ts) run in their server span; this one decides
   * the IDs of requests handled without it (app.handle). Absent: nothing recorded.
   */
  tracing?: Tracing;
}

/** Paths of the JSON APIs and files: never an HTML error page, whatever the client accepts. */
const isApiPath = (path: string) => /^\/(v1|partner|media|healthz|readyz|livez)(\/|$)/.test(path);

export function createMarketplace(appDeps: MarketplaceDeps) {
  registerFormats();
  // Inquiries sent with an Idempotency-Key (and the form's hidden key) run in one transaction with their key.
  const idempotency = createIdempotencyLayer({
    sql: appDeps.sql,
    retentionHours: appDeps.idempotencyRetentionHours,
  });
  const deps: MarketplaceDeps = { ...appDeps, sql: idempotency.sql };
  const traces = createRequestTraces(deps.logger, deps.tracing ?? disabledTracing("pss-marketplace"));
  const pipeline = createHttpPipeline({
    logger: deps.logger,
    traces,
    maxBodyBytes: deps.maxBodyBytes,
    httpMetrics: deps.httpMetrics,
    // A browser that opens a page that does not exist gets a page, not JSON (the APIs keep their JSON).
    notFoundResponse: (request) =>
      wantsHtml(request) && !isApiPath(pathOf(request.url))
        ? notFoundPage("Page", `${deps.publicBaseUrl}${pathOf(request.url)}`)
        : null,
  });
  const previews =
    deps.previews ?? createPreviewLinks({ sql: deps.sql, publicBaseUrl: deps.publicBaseUrl, ttlSeconds: 3600 });
  // One intake for the JSON route and the listing page's form: the same limiter instances count both.
  const leadIntake = { sql: deps.sql, logger: deps.logger, traces, idempotency, ...deps.leads };
  const buyers =
    deps.buyers ??
    createBuyerService({
      sql: deps.sql,
      opensearch: deps.opensearch ?? null,
      searchAlias: deps.searchAlias ?? DEFAULT_SEARCH_ALIAS,
      publicBaseUrl: deps.publicBaseUrl,
    });
  const savedSearches =
    deps.savedSearches ??
    createSavedSearches({
      sql: deps.sql,
      logger: deps.logger,
      buyers,
      publicBaseUrl: deps.publicBaseUrl,
      settings: DEFAULT_SAVED_SEARCH_SETTINGS,
    });

  return pipeline
    .install(new Elysia({ normalize: false, systemRouter: false }))
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
      createSavedSearchRoutes({
        saved: savedSearches,
        publicBaseUrl: deps.publicBaseUrl,
        maxBodyBytes: deps.maxBodyBytes,
        trustedProxies: deps.leads?.trustedProxies,
      }),
    )
    .use(
      createBuyerPlugin({
        buyers,
        sql: deps.sql,
        opensearch: deps.opensearch ?? null,
        searchAlias: deps.searchAlias ?? DEFAULT_SEARCH_ALIAS,
        publicBaseUrl: deps.publicBaseUrl,
        logger: deps.logger,
        leads: leadIntake,
        maxBodyBytes: deps.maxBodyBytes,
        sitemapPageSize: deps.sitemapPageSize,
        stats: deps.stats,
      }),
    )
    .use(
      new Elysia({ name: "lead-intake" })
        .onTransform(({ body }) => throwBodyRejection(body))
        .use(createLeadIntakeRoutes(leadIntake)),
    );
}

export type Marketplace = ReturnType<typeof createMarketplace>;
