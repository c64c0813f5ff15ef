// The public listing page behind serviceListingUrl: the same public data as GET /v1/listings/{id}, a photo
// gallery from the processed variants, the broker card and the inquiry form.
import type { PublicListing, UntypedJson } from "@pss/contracts";
import { badges } from "./cards.ts";
import { excerpt } from "../public-views.ts";
import {
  formatMoney,
  headlineOf,
  html,
  largestImageUrl,
  page,
  picture,
  placeOf,
  shareImageUrl,
  type Raw,
} from "./html.ts";
import { inquiryForm, type InquiryFormState } from "./inquiry-form.ts";
import { listingJsonLd } from "./listing-json-ld.ts";

const PROPERTY_KINDS: Record<string, string> = { OWNED: "Owned", RENTED: "Rented (leased)", NEGOTIABLE: "Negotiable" };
const FREQUENCIES: Record<string, string> = {
  WEEKLY: "per week",
  MONTHLY: "per month",
  QUARTERLY: "per quarter",
  ANNUALLY: "per year",
};
const STATUSES: Record<string, string> = {
  FOR_SALE: "For sale",
  REVIEWING_OFFERS: "Reviewing offers",
  PENDING_CONTRACT: "Pending contract",
  UNDER_CONTRACT: "Under contract",
};

function addressLine(l: Pick<PublicListing, "location">): string {
  const { streetAddress1, city, state, postalCode, country } = l.location;
  return [streetAddress1, city, [state, postalCode].filter(Boolean).join(" "), country].filter(Boolean).join(", ");
}

const yesNo = (v: unknown) => (v === true ? "Yes" : v === false ? "No" : null);
const dateOnly = (iso: unknown) =>
  typeof iso === "string"
    ? new Date(iso).toLocaleDateString("en-US", { year: "numeric", month: "long", day: "numeric", timeZone: "UTC" })
    : null;
const amount = (v: unknown) => (typeof v === "number" ? formatMoney(v) : null);

function facts(rows: [string, string | null | undefined][], label: string): Raw | string {
  const shown = rows.filter((r): r is [string, string] => typeof r[1] === "string" && r[1] !== "");
  if (shown.length === 0) return "";
  return html`<dl class="facts" aria-label="${label}">${shown.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`;
}

/** The first photo large and loaded at once; the others below it, loaded as they scroll into view. */
function gallery(l: PublicListing, headline: string): Raw | string {
  if (l.photos.length === 0) return "";
  const n = l.photos.length;
  const item = (p: PublicListing["photos"][number], i: number, sizes: string) => {
    const image = picture(p, `Photo ${i + 1} of ${n}: ${headline}`, { sizes, eager: i === 0 });
    const full = largestImageUrl(p.variants);
    return full ? html`<a href="${full}">${image}</a>` : image;
  };
  const [cover, ...rest] = l.photos;
  return html`<section class="gallery" aria-labelledby="photos-heading"><h2 id="photos-heading">Photos</h2>
<div class="cover">${item(cover!, 0, "(min-width: 64rem) 38rem, (min-width: 60rem) 60vw, 100vw")}</div>
${rest.length ? html`<ul>${rest.map((p, i) => html`<li>${item(p, i + 1, "(min-width: 40rem) 12rem, 45vw")}</li>`)}</ul>` : ""}
</section>`;
}

export function renderListingPage(
  l: PublicListing,
  form: { state: InquiryFormState | null; status?: number; headers?: Record<string, string> } = { state: null },
): Response {
  const headline = headlineOf(l);
  const where = placeOf(l.location);
  const title = l.title
    ? `${l.title} – ${l.businessType} for sale in ${where}`
    : `${l.businessType} for sale in ${where}`;
  const price = amount(l.financials.askingPrice);
  const description =
    excerpt(l.description, 160) ?? `${l.businessType} for sale in ${where}${price ? `, asking ${price}` : ""}.`;
  const cover = l.photos[0];
  const property = l.property as UntypedJson;
  const rent = (property.rentData ?? {}) as UntypedJson;
  const financing = l.financing as UntypedJson;

  const body = html`<article>
<header>
<h1>${headline}</h1>
${badges(l)}
<p class="muted">${l.businessType} · ${addressLine(l)}</p>
${price ? html`<p class="price">Asking ${price}</p>` : ""}
</header>
<div class="listing-columns"><div>
${gallery(l, headline)}
${l.description ? html`<section aria-labelledby="about-heading" class="description"><h2 id="about-heading">About this business</h2>${l.description.split(/\n{2,}/).map((p) => html`<p>${p}</p>`)}</section>` : ""}
<section aria-labelledby="financials-heading"><h2 id="financials-heading">Financials</h2>
${
  facts(
    [
      ["Asking price", price],
      ["Revenue", amount(l.financials.revenue)],
      ["Seller's discretionary earnings", amount(l.financials.sde)],
      ["Inventory", amount(l.financials.inventory)],
      ["Furniture, fixtures and equipment", amount(l.financials.ffande)],
    ],
    "Financials",
  ) || html`<p class="muted">Not disclosed.</p>`
}
</section>
<section aria-labelledby="details-heading"><h2 id="details-heading">Business details</h2>
${facts(
  [
    ["Status", STATUSES[l.status as string] ?? null],
    ["Business type", l.businessType],
    ["Established", l.establishedAt ? String(new Date(l.establishedAt).getUTCFullYear()) : null],
    ["Location", addressLine(l)],
    ["Property", PROPERTY_KINDS[property.propertyKind as string] ?? null],
    ["Area", typeof property.areaSqft === "number" ? `${property.areaSqft.toLocaleString("en-US")} sq ft` : null],
    [
      "Rent",
      typeof rent.amount === "number"
        ? `${formatMoney(rent.amount)} ${FREQUENCIES[rent.frequency as string] ?? ""}`.trim()
        : null,
    ],
    ["Lease renewable", yesNo(rent.leaseRenewable)],
    ["Lease expires", dateOnly(rent.leaseExpiration)],
    ["Seller financing available", yesNo(financing.financingAvailable)],
    ["SBA prequalified", yesNo(financing.sbaPrequalified)],
    ["Minimum down payment", amount(financing.minimumDownPayment)],
  ],
  "Business details",
)}
</section>
</div><div>
<section aria-labelledby="broker-heading"><h2 id="broker-heading">Listed by</h2>
<div class="broker-card">${l.broker.avatar ? picture(l.broker.avatar, `Photo of ${l.broker.name}`, { sizes: "96px", className: "avatar" }) : ""}
<p><a href="${l.broker.serviceProfileUrl}">${l.broker.name}</a><br><span class="muted">Business broker</span></p></div>
</section>
${inquiryForm(l, form.state)}
</div></div>
</article>`;

  return page(
    {
      title,
      description,
      canonicalUrl: l.serviceListingUrl,
      type: "product",
      imageUrl: cover ? shareImageUrl(cover.variants) : null,
      imageAlt: `Photo of ${headline}`,
      jsonLd: listingJsonLd(l),
    },
    body,
    form.status ?? 200,
    form.headers ?? {},
  );
}
