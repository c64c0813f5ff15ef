// The buyers' HTML pages: search (/ and /listings), a listing with its inquiry form, a broker, the inquiry
// confirmation, sitemap.xml and robots.txt. Thin handlers: the work is in the buyer service, lead-form.ts and
// the renderers beside this file.
import { Elysia } from "elysia";
import { isDependencyUnavailable, type Logger } from "@pss/service-kit";
import { DEPENDENCY_RETRY_AFTER_SECONDS, ServiceUnavailableError, type RequestTraces } from "@pss/http-kit";
import { submitLeadForm } from "../../leads/lead-form.ts";
import type { LeadIntakeDeps } from "../../leads/lead-service.ts";
import type { BuyerService } from "../buyer-service.ts";
import type { SearchResponse } from "@pss/contracts";
import { NO_FACETS, SearchUnavailableError } from "../listing-search.ts";
import { parseSearchPage, rawQuery } from "../search-params.ts";
import { renderBrokerPage } from "./broker-page.ts";
import { isSameSiteForm } from "@pss/html";
import { renderListingPage } from "./listing-page.ts";
import { renderSearchPage, SEARCH_PAGE_SIZE } from "./search-page.ts";
import { createSitemaps, robotsTxt } from "./sitemap.ts";
import { formRefusedPage, gonePage, inquirySentPage, notFoundPage, unavailablePage } from "./status-pages.ts";
import type postgres from "postgres";
import type { PageServer, StatsRecorder } from "../../stats/stats-recorder.ts";

export interface PageDeps {
  buyers: BuyerService;
  sql: postgres.Sql;
  publicBaseUrl: string;
  logger: Logger;
  /** The same intake (and limiter instances) as POST /v1/listings/{id}/leads. */
  leads: LeadIntakeDeps & { traces?: RequestTraces };
  maxBodyBytes: number;
  sitemapPageSize?: number;
  /** Counts listing-page views and search impressions; absent = no counting. */
  stats?: StatsRecorder;
}

/** Similar listings on a 410 page. */
const SIMILAR = 4;

/** PostgreSQL unreachable: a page that says so (503) instead of the API's JSON. */
async function htmlErrors(canonicalUrl: string, render: () => Promise<Response>): Promise<Response> {
  try {
    return await render();
  } catch (err) {
    if (err instanceof ServiceUnavailableError || isDependencyUnavailable(err))
      return unavailablePage(canonicalUrl, DEPENDENCY_RETRY_AFTER_SECONDS);
    throw err;
  }
}

const firstValues = (query: Record<string, string | string[]>) =>
  Object.fromEntries(Object.entries(query).map(([k, v]) => [k, Array.isArray(v) ? v[0]! : v]));

export function createPageRoutes(deps: PageDeps) {
  const { buyers, publicBaseUrl: base } = deps;
  const sitemaps = createSitemaps({ sql: deps.sql, publicBaseUrl: base, pageSize: deps.sitemapPageSize });
  const listingPath = (id: string) => `/listings/${encodeURIComponent(id)}`;

  async function searchPage(request: Request, server: PageServer, path: string): Promise<Response> {
    const query = rawQuery(request);
    const { request: search, page, problems } = parseSearchPage(query, SEARCH_PAGE_SIZE, buyers.findPlace);
    let unavailable = false;
    let result: SearchResponse | null = null;
    try {
      // With problems, the search does not run; the drop-downs and counts then show every listing's.
      const everything = problems.length ? parseSearchPage({}, SEARCH_PAGE_SIZE, buyers.findPlace).request : null;
      result = await buyers.search(everything ?? search);
    } catch (err) {
      if (!(err instanceof SearchUnavailableError)) throw err;
      unavailable = true;
    }
    if (result && !problems.length)
      deps.stats?.shown(
        result.results.map((r) => r.serviceListingId),
        request,
        server,
      );
    return renderSearchPage({
      path,
      base,
      raw: firstValues(query),
      page,
      problems,
      result: problems.length ? null : result,
      facets: result?.facets ?? NO_FACETS,
      unavailable,
      nearLabel: search.near?.place.label,
    });
  }

  /** A listing that is not buyer-visible: 410 with similar listings if it left the market, else 404. */
  async function unavailableListing(id: string): Promise<Response> {
    const gone = await buyers.goneListing(id);
    if (gone) return gonePage(gone, await buyers.similarListings(gone, SIMILAR), `${base}${listingPath(id)}`);
    return notFoundPage("Listing", `${base}${listingPath(id)}`);
  }

  return (
    new Elysia({ name: "buyer-pages" })
      .get("/", ({ request, server }) => htmlErrors(`${base}/`, () => searchPage(request, server, "/")))
      .get("/listings", ({ request, server }) =>
        htmlErrors(`${base}/listings`, () => searchPage(request, server, "/listings")),
      )
      .get("/listings/:serviceListingId", ({ params: { serviceListingId: id }, request, server }) =>
        htmlErrors(`${base}${listingPath(id)}`, async () => {
          const listing = await buyers.listing(id);
          if (listing) deps.stats?.viewed(listing.serviceListingId, request, server);
          return listing ? renderListingPage(listing) : unavailableListing(id);
        }),
      )
      .post("/listings/:serviceListingId/inquiry", ({ params: { serviceListingId: id }, request, server }) =>
        htmlErrors(`${base}${listingPath(id)}`, async () => {
          if (!isSameSiteForm(request, base)) {
            deps.logger.warn("inquiry form refused: posted from another site", { listingId: id.slice(0, 20) });
            return formRefusedPage(`${base}${listingPath(id)}`, listingPath(id));
          }
          const outcome = await submitLeadForm(deps.leads, {
            listingId: id,
            request,
            server,
            maxBodyBytes: deps.maxBodyBytes,
            trace: deps.leads.traces?.of(request),
            log: deps.leads.traces?.logger(request),
          });
          // POST-redirect-GET: reloading the confirmation never sends the inquiry again. Its own fragment, or the
          // browser would keep the form's "#inquiry".
          if (outcome.kind === "accepted")
            return new Response(null, {
              status: 303,
              headers: { location: `${listingPath(id)}/inquiry/sent#content`, "cache-control": "no-store" },
            });
          if (outcome.kind === "not-found") return unavailableListing(id);
          const listing = await buyers.listing(id);
          if (!listing) return unavailableListing(id);
          if (outcome.kind === "invalid")
            return renderListingPage(listing, {
              state: { values: outcome.values, errors: outcome.errors },
              status: 400,
            });
          const minutes = Math.max(1, Math.ceil(outcome.retryAfterSeconds / 60));
          return renderListingPage(listing, {
            state: {
              values: outcome.values,
              errors: {},
              notice: `Your inquiry was not sent: too many inquiries came from your network recently. Please try again in about ${minutes} minute${minutes === 1 ? "" : "s"}.`,
            },
            status: 429,
            headers: { "retry-after": String(outcome.retryAfterSeconds) },
          });
        }),
      )
      // The form's address opened directly (e.g. from the history): the form is on the listing page.
      .get(
        "/listings/:serviceListingId/inquiry",
        ({ params: { serviceListingId: id } }) =>
          new Response(null, { status: 303, headers: { location: `${listingPath(id)}#inquiry` } }),
      )
      .get("/listings/:serviceListingId/inquiry/sent", ({ params: { serviceListingId: id } }) =>
        htmlErrors(`${base}${listingPath(id)}/inquiry/sent`, async () =>
          inquirySentPage(await buyers.listing(id), `${base}${listingPath(id)}/inquiry/sent`),
        ),
      )
      .get("/brokers/:serviceBrokerId", ({ params: { serviceBrokerId: id } }) =>
        htmlErrors(`${base}/brokers/${encodeURIComponent(id)}`, async () => {
          const broker = await buyers.broker(id);
          return broker
            ? renderBrokerPage(broker)
            : notFoundPage("Broker", `${base}/brokers/${encodeURIComponent(id)}`);
        }),
      )
      .get("/sitemap.xml", () => sitemaps.index())
      .get(
        "/sitemaps/:file",
        async ({ params }) =>
          (await sitemaps.file(params.file)) ??
          new Response("Not found\n", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } }),
      )
      .get("/robots.txt", () => robotsTxt(base))
  );
}
