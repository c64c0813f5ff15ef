// The previews of test records (docs/sandbox.md): the serviceListingUrl and serviceProfileUrl a test key gets.
// The page is the buyers' page for the record as it would look live, marked as a preview (a banner, "Preview" in
// the title, noindex, no caching, no referrer). It opens with a valid signed link (preview-links.ts) or with the
// owning partner's test key in Authorization; anything else gets 403, and a live record's ID here is 404 (live
// records have their public pages).
import { Elysia } from "elysia";
import { ErrorMessages, isBuyerVisible, isServiceId } from "@pss/contracts";
import type postgres from "postgres";
import type { Authenticator, PreviewKind, PreviewLinks } from "@pss/http-kit";
import { findTestBrokerForPreview, findTestListingForPreview } from "../buyers/public-repository.ts";
import { brokerUrl, listingUrl, toPublicBroker, toPublicListing } from "../buyers/public-views.ts";
import { renderBrokerPage } from "../buyers/pages/broker-page.ts";
import { escapeHtml, html, page } from "../buyers/pages/html.ts";
import { notFoundPage } from "../buyers/pages/status-pages.ts";
import { renderListingPage } from "../buyers/pages/listing-page.ts";

export interface PreviewRouteDeps {
  sql: postgres.Sql;
  authenticator: Authenticator;
  previews: PreviewLinks;
  publicBaseUrl: string;
}

/** As on a live profile. */
const PROFILE_LISTINGS = 100;

const PREVIEW_HEADERS = {
  "x-robots-tag": "noindex, nofollow",
  "cache-control": "private, no-store",
  // The signed link must not travel to image hosts or sites the page links to.
  "referrer-policy": "no-referrer",
};

const SIMULATED_LEADS_NOTE =
  '<p class="preview-note">On the live page buyers send inquiries here. For a test listing, simulate one with <code>POST /partner/v1/test/listings/{externalListingId}/leads</code> and your test key.</p>';

/** The banner's markup; the only interpolated value (a status) is escaped. */
function banner(kind: PreviewKind, status: string | null): string {
  const what = kind === "listing" ? "test listing" : "test broker";
  const live =
    kind === "listing"
      ? `Status ${escapeHtml(status ?? "")}: live, this listing ${status !== null && isBuyerVisible(status) ? "would" : "would not"} be visible to buyers.`
      : "Live, this profile would be public.";
  return `<aside class="preview-banner" role="note" style="margin:0 0 1.25rem;padding:.75rem 1rem;border:2px dashed #b3261e;border-radius:.5rem;background:#fff4f2"><strong>Preview of a ${what}.</strong> Written with a test key: never shown to buyers, in search or in sitemaps, and no lead e-mails are sent for it. ${live}</aside>`;
}

/**
 * Marks a rendered page as a preview: the banner first in <main>, "Preview" in the title, noindex instead of a
 * canonical link, and links to other test records' public URLs (which do not exist) pointed at their previews.
 */
function asPreview(response: Response, opts: { banner: string; links: Map<string, string> }): Response {
  const rewritten = new HTMLRewriter()
    .on("main", { element: (el) => void el.prepend(opts.banner, { html: true }) })
    .on("title", { element: (el) => void el.prepend("Preview – ") })
    .on('link[rel="canonical"]', { element: (el) => void el.remove() })
    // A buyer's inquiry cannot reach a test listing: the form would only be refused. Leads are simulated instead.
    .on('form[action*="/inquiry"]', { element: (el) => void el.replace(SIMULATED_LEADS_NOTE, { html: true }) })
    .on("head", { element: (el) => void el.append(`<meta name="robots" content="noindex, nofollow">`, { html: true }) })
    .on("a[href]", {
      element(el) {
        const target = opts.links.get(el.getAttribute("href") ?? "");
        if (target) el.setAttribute("href", target);
      },
    })
    .transform(response);
  for (const [k, v] of Object.entries(PREVIEW_HEADERS)) rewritten.headers.set(k, v);
  return rewritten;
}

function refused(reason: "invalid" | "expired", canonicalUrl: string): Response {
  const response = page(
    { title: "Preview not available", description: ErrorMessages.previewUnavailable, canonicalUrl, noIndex: true },
    html`<h1>Preview not available</h1>
<p>${reason === "expired" ? "This preview link has expired." : "This preview link is not valid."} Preview links of test records work for a short time. Read the record through the partner API with your test key for a fresh link.</p>`,
    403,
  );
  for (const [k, v] of Object.entries(PREVIEW_HEADERS)) response.headers.set(k, v);
  return response;
}

function notFound(what: string, canonicalUrl: string): Response {
  const response = notFoundPage(what, canonicalUrl);
  for (const [k, v] of Object.entries(PREVIEW_HEADERS)) response.headers.set(k, v);
  return response;
}

export function createPreviewRoutes(deps: PreviewRouteDeps) {
  const base = deps.publicBaseUrl;

  /** The owning partner's test key, or a valid signed link. */
  async function access(
    request: Request,
    query: Record<string, string | undefined>,
    kind: PreviewKind,
    id: string,
    owner: string,
  ): Promise<"valid" | "invalid" | "expired"> {
    const header = request.headers.get("authorization");
    if (header?.startsWith("Bearer ")) {
      const principal = await deps.authenticator.authenticate(header.slice(7));
      if (principal && principal.mode === "test" && principal.partnerId === owner) return "valid";
    }
    return deps.previews.verify(kind, id, query.expires ?? null, query.signature ?? null);
  }

  return new Elysia({ name: "previews" })
    .get(
      "/preview/listings/:serviceListingId",
      async ({ params, query, request }) => {
        const id = params.serviceListingId;
        const here = `${base}/preview/listings/${encodeURIComponent(id)}`;
        const row = isServiceId(id) ? await findTestListingForPreview(deps.sql, id) : null;
        if (!row) return notFound("Listing", here);
        const granted = await access(request, query, "listing", id, row.partnerId);
        if (granted !== "valid") return refused(granted, here);
        const view = toPublicListing(row, base);
        const links = new Map([[brokerUrl(base, row.broker.id), await deps.previews.brokerUrl(row.broker.id)]]);
        return asPreview(renderListingPage(view), { banner: banner("listing", row.status), links });
      },
      { detail: { hide: true } },
    )
    .get(
      "/preview/brokers/:serviceBrokerId",
      async ({ params, query, request }) => {
        const id = params.serviceBrokerId;
        const here = `${base}/preview/brokers/${encodeURIComponent(id)}`;
        const found = isServiceId(id) ? await findTestBrokerForPreview(deps.sql, id, PROFILE_LISTINGS) : null;
        if (!found) return notFound("Broker", here);
        const granted = await access(request, query, "broker", id, found.partnerId);
        if (granted !== "valid") return refused(granted, here);
        const links = new Map(
          await Promise.all(
            found.listings.map(
              async (l) => [listingUrl(base, l.id), await deps.previews.listingUrl(l.id)] as [string, string],
            ),
          ),
        );
        return asPreview(renderBrokerPage(toPublicBroker(found.broker, found.listings, base)), {
          banner: banner("broker", null),
          links,
        });
      },
      { detail: { hide: true } },
    );
}
