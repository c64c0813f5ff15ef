// Pages that are not a listing, a broker or a search: not found (404), gone (410, with similar listings),
// temporarily unavailable (503), a refused form (403), and the inquiry confirmation.
import type { PublicListing, PublicListingSummary } from "@pss/contracts";
import type { GoneListing } from "../public-repository.ts";
import { listingCards } from "./cards.ts";
import { headlineOf, html, page } from "./html.ts";

export function notFoundPage(what: string, canonicalUrl: string): Response {
  return page(
    {
      title: `${what} not found`,
      description: `This ${what.toLowerCase()} is not available.`,
      canonicalUrl,
      noIndex: true,
    },
    html`<h1>${what} not found</h1>
<p>This ${what.toLowerCase()} does not exist or is no longer on the market.</p>
<p><a href="/listings">Browse businesses for sale</a></p>`,
    404,
  );
}

/**
 * A listing that left the market (SOLD, ARCHIVED): 410 Gone, so search engines drop it, with a way on for the
 * buyer. It names nothing of the old listing but its business type and state (what "similar" means).
 */
export function gonePage(gone: GoneListing, similar: PublicListingSummary[], canonicalUrl: string): Response {
  const more = `/listings?${new URLSearchParams({ businessType: gone.businessType, state: gone.state })}`;
  return page(
    {
      title: "This business is no longer for sale",
      description: `Similar ${gone.businessType} businesses for sale in ${gone.state}.`,
      canonicalUrl,
      noIndex: true,
    },
    html`<h1>This business is no longer for sale</h1>
<p>It has been sold or taken off the market.</p>
<section aria-labelledby="similar-heading"><h2 id="similar-heading">Similar businesses for sale</h2>
${similar.length ? listingCards(similar) : html`<p>There are no similar businesses on the market right now.</p>`}
<p><a href="${more}">All ${gone.businessType} businesses for sale in ${gone.state}</a> · <a href="/listings">All businesses for sale</a></p>
</section>`,
    410,
  );
}

export function unavailablePage(canonicalUrl: string, retryAfterSeconds: number): Response {
  return page(
    {
      title: "Temporarily unavailable",
      description: "This page is temporarily unavailable.",
      canonicalUrl,
      noIndex: true,
    },
    html`<h1>Temporarily unavailable</h1>
<p>We cannot show this page right now. Please try again in a moment; nothing you sent was lost.</p>`,
    503,
    { "retry-after": String(retryAfterSeconds) },
  );
}

export function formRefusedPage(canonicalUrl: string, listingUrl: string): Response {
  return page(
    { title: "Inquiry not sent", description: "The inquiry was not sent.", canonicalUrl, noIndex: true },
    html`<h1>Inquiry not sent</h1>
<p>Inquiries can only be sent from the form on the listing's own page.</p>
<p><a href="${listingUrl}#inquiry">Go to the listing's inquiry form</a></p>`,
    403,
  );
}

/** After a successful inquiry (POST-redirect-GET): no buyer details, so reloading or sharing it reveals nothing. */
export function inquirySentPage(listing: PublicListing | null, canonicalUrl: string): Response {
  const body = listing
    ? html`<h1>Thank you, your inquiry has been sent</h1>
<p>We have passed your message about <a href="${listing.serviceListingUrl}">${headlineOf(listing)}</a> to the broker, ${listing.broker.name}, who will reply to the e-mail address you gave.</p>
<p><a href="${listing.serviceListingUrl}">Back to the listing</a> · <a href="${`/listings?${new URLSearchParams({ businessType: listing.businessType })}`}">More ${listing.businessType} businesses for sale</a></p>`
    : html`<h1>Thank you, your inquiry has been sent</h1>
<p>The broker will reply to the e-mail address you gave.</p>
<p><a href="/listings">Browse businesses for sale</a></p>`;
  return page(
    { title: "Inquiry sent", description: "Your inquiry has been sent to the broker.", canonicalUrl, noIndex: true },
    body,
  );
}
