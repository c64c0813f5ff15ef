// The public listing page behind serviceListingUrl: the same public data as GET /v1/listings/{id}.
import type { PublicListing } from "@pss/contracts";
import { excerpt } from "../public-views.ts";
import { formatMoney, html, page, picture, shareImageUrl, type Raw } from "./html.ts";

const PROPERTY_KINDS: Record<string, string> = { OWNED: "Owned", RENTED: "Rented (leased)", NEGOTIABLE: "Negotiable" };
const FREQUENCIES: Record<string, string> = { WEEKLY: "per week", MONTHLY: "per month", QUARTERLY: "per quarter", ANNUALLY: "per year" };

export function place(l: Pick<PublicListing, "location">): string {
  return [l.location.city, l.location.state].filter(Boolean).join(", ");
}

export function addressLine(l: Pick<PublicListing, "location">): string {
  const { streetAddress1, city, state, postalCode, country } = l.location;
  return [streetAddress1, city, [state, postalCode].filter(Boolean).join(" "), country].filter(Boolean).join(", ");
}

const yesNo = (v: unknown) => (v === true ? "Yes" : v === false ? "No" : null);
const dateOnly = (iso: unknown) => (typeof iso === "string" ? new Date(iso).toLocaleDateString("en-US", { year: "numeric", month: "long", day: "numeric", timeZone: "UTC" }) : null);

function facts(rows: [string, string | null | undefined][], label: string): Raw | string {
  const shown = rows.filter((r): r is [string, string] => typeof r[1] === "string" && r[1] !== "");
  if (shown.length === 0) return "";
  return html`<dl class="facts" aria-label="${label}">${shown.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`;
}

const amount = (v: unknown) => (typeof v === "number" ? formatMoney(v) : null);

export function renderListingPage(l: PublicListing): Response {
  const headline = l.title ?? `${l.businessType} for sale`;
  const where = place(l);
  const title = l.title ? `${l.title} – ${l.businessType} for sale in ${where}` : `${l.businessType} for sale in ${where}`;
  const price = amount(l.financials.askingPrice);
  const description = excerpt(l.description, 160) ?? `${l.businessType} for sale in ${where}${price ? `, asking ${price}` : ""}.`;
  const cover = l.photos[0];
  const property = l.property as Record<string, any>;
  const rent = (property.rentData ?? {}) as Record<string, any>;
  const financing = l.financing as Record<string, any>;

  const body = html`<article>
<header>
<h1>${headline}</h1>
${l.underContract ? html`<p><span class="badge" role="status">Under contract</span></p>` : ""}
<p class="muted">${l.businessType} · ${addressLine(l)}</p>
${price ? html`<p class="price">Asking ${price}</p>` : ""}
</header>
${l.photos.length
  ? html`<section aria-labelledby="photos-heading"><h2 id="photos-heading">Photos</h2><ul class="photos">${l.photos.map(
      (p, i) => html`<li>${picture(p, `Photo ${i + 1} of ${l.photos.length}: ${headline}`, { sizes: "(min-width: 60rem) 19rem, 50vw", eager: i === 0 })}</li>`,
    )}</ul></section>`
  : ""}
${l.description ? html`<section aria-labelledby="about-heading" class="description"><h2 id="about-heading">About this business</h2>${l.description.split(/\n{2,}/).map((p) => html`<p>${p}</p>`)}</section>` : ""}
<section aria-labelledby="financials-heading"><h2 id="financials-heading">Financials</h2>
${facts(
  [
    ["Asking price", price],
    ["Revenue", amount(l.financials.revenue)],
    ["Seller's discretionary earnings", amount(l.financials.sde)],
    ["Inventory", amount(l.financials.inventory)],
    ["Furniture, fixtures and equipment", amount(l.financials.ffande)],
  ],
  "Financials",
) || html`<p class="muted">Not disclosed.</p>`}
</section>
<section aria-labelledby="details-heading"><h2 id="details-heading">Business details</h2>
${facts(
  [
    ["Business type", l.businessType],
    ["Established", l.establishedAt ? String(new Date(l.establishedAt).getUTCFullYear()) : null],
    ["Location", addressLine(l)],
    ["Property", PROPERTY_KINDS[property.propertyKind as string] ?? null],
    ["Area", typeof property.areaSqft === "number" ? `${property.areaSqft.toLocaleString("en-US")} sq ft` : null],
    ["Rent", typeof rent.amount === "number" ? `${formatMoney(rent.amount)} ${FREQUENCIES[rent.frequency as string] ?? ""}`.trim() : null],
    ["Lease renewable", yesNo(rent.leaseRenewable)],
    ["Lease expires", dateOnly(rent.leaseExpiration)],
    ["Seller financing available", yesNo(financing.financingAvailable)],
    ["SBA prequalified", yesNo(financing.sbaPrequalified)],
    ["Minimum down payment", amount(financing.minimumDownPayment)],
  ],
  "Business details",
)}
</section>
<section aria-labelledby="broker-heading"><h2 id="broker-heading">Listed by</h2>
<div class="broker">${l.broker.avatar ? picture(l.broker.avatar, `Photo of ${l.broker.name}`, { sizes: "96px", className: "avatar" }) : ""}
<p><a href="${l.broker.serviceProfileUrl}">${l.broker.name}</a><br><span class="muted">Business broker</span></p></div>
</section>
</article>`;

  return page(
    { title, description, canonicalUrl: l.serviceListingUrl, imageUrl: cover ? shareImageUrl(cover.variants) : null, imageAlt: `Photo of ${headline}` },
    body,
  );
}
