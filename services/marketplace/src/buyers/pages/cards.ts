// A listing as a card: search results, a broker's listings, similar listings on a 410 page. Everything on it
// comes from the public summary (first ready photo, address as its visibility allows).
import type { PublicListingSummary } from "@pss/contracts";
import { formatMoney, headlineOf, html, picture, placeOf, type Raw } from "./html.ts";

/** Under contract, and the asking price went down lately: shown on cards and on the listing's page alike. */
export function badges(l: { underContract: boolean; priceReduced: boolean }): Raw | string {
  if (!l.underContract && !l.priceReduced) return "";
  return html`<p>${l.underContract ? html`<span class="badge">Under contract</span> ` : ""}${l.priceReduced ? html`<span class="badge reduced">Price reduced</span>` : ""}</p>`;
}

const CARD_IMAGE_SIZES = "(min-width: 64rem) 20rem, (min-width: 40rem) 45vw, 100vw";

export function listingCard(l: PublicListingSummary, headingLevel: 2 | 3 = 3): Raw {
  const headline = headlineOf(l);
  const link = html`<a href="${l.serviceListingUrl}">${headline}</a>`;
  const f = l.financials;
  const figures = [
    typeof f.revenue === "number" ? `Revenue ${formatMoney(f.revenue)}` : null,
    typeof f.sde === "number" ? `SDE ${formatMoney(f.sde)}` : null,
  ].filter(Boolean) as string[];
  return html`<li>
${l.photo ? picture(l.photo, `Photo of ${headline}`, { sizes: CARD_IMAGE_SIZES }) : html`<p class="no-photo">No photo yet</p>`}
${headingLevel === 2 ? html`<h2>${link}</h2>` : html`<h3>${link}</h3>`}
${badges(l)}
<p class="muted">${l.businessType} · ${placeOf(l.location)}</p>
<p><strong>${typeof f.askingPrice === "number" ? `Asking ${formatMoney(f.askingPrice)}` : "Price on request"}</strong></p>
${figures.length ? html`<p class="figures muted">${figures.join(" · ")}</p>` : ""}
</li>`;
}

export function listingCards(listings: PublicListingSummary[]): Raw {
  return html`<ul class="cards">${listings.map((l) => listingCard(l))}</ul>`;
}
