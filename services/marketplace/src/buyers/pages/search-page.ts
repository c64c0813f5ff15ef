// The search page (/ and /listings): a GET form (works without JavaScript; the URL is the search, so it can be
// shared and bookmarked), result cards, numbered pages. Problems are shown beside their fields.
import { PRICE_REDUCED_DAYS, type SearchFacets, type SearchResponse } from "@pss/contracts";
import { GEO_ATTRIBUTION } from "@pss/geo";
import { MAX_SEARCH_WINDOW, type SearchProblem } from "../search-params.ts";
import { listingCards } from "./cards.ts";
import { html, page, SITE_NAME, type Raw } from "./html.ts";

/** Result cards per page. */
export const SEARCH_PAGE_SIZE = 12;

/** The form's fields, in the order they appear; what the error summary calls them. */
const LABELS: Record<string, string> = {
  q: "Search words",
  businessType: "Business type",
  state: "State",
  city: "City",
  minPrice: "Asking price from",
  maxPrice: "Asking price to",
  minRevenue: "Revenue from",
  maxRevenue: "Revenue to",
  minSde: "SDE from",
  maxSde: "SDE to",
  financingAvailable: "Seller financing",
  sbaPrequalified: "SBA pre-qualified",
  realEstateIncluded: "Real estate included",
  priceReduced: "Price reduced",
  listedWithinDays: "Listed in the last",
  near: "Near (city or ZIP code)",
  radius: "Within",
  radiusUnit: "Unit",
  underContract: "Under contract",
  sort: "Sort by",
  page: "Page",
};
const FORM_FIELDS = Object.keys(LABELS).filter((f) => f !== "page");
/** The search's fields (what its URL, a saved search and the save form carry). */
export const SEARCH_FORM_FIELDS: readonly string[] = FORM_FIELDS;
const FILTER_FIELDS = FORM_FIELDS.filter((f) => f !== "q");

const SORT_OPTIONS: [string, string][] = [
  ["relevance", "Best match"],
  ["newest", "Newest first"],
  ["price_asc", "Price: low to high"],
  ["price_desc", "Price: high to low"],
];

export interface SearchPageInput {
  /** "/" (home) or "/listings". */
  path: string;
  base: string;
  /** The query as sent, one value per name (what the form shows again). */
  raw: Record<string, string>;
  page: number;
  problems: SearchProblem[];
  /** null when the search could not run (problems, or search unavailable). */
  result: SearchResponse | null;
  /** Counts beside the filters: this search's, or every listing's when the search has problems. */
  facets: SearchFacets;
  unavailable: boolean;
  /** The place "near" was found as ("Austin, TX"), shown back beside the field. */
  nearLabel?: string;
}

/** The search as a query string: known, non-empty values only, in a fixed order (canonical and pager links). */
export function searchQueryString(raw: Record<string, string>, page: number): string {
  const params = new URLSearchParams();
  for (const f of FORM_FIELDS) {
    const v = raw[f]?.trim();
    if (v) params.set(f, v);
  }
  if (page > 1) params.set("page", String(page));
  const qs = params.toString();
  return qs ? `?${qs}` : "";
}

function problemOf(problems: SearchProblem[], field: string): SearchProblem | undefined {
  return problems.find((p) => p.field === field);
}

/** aria-invalid and aria-describedby for a field with a problem, and the message shown beside it. */
function fieldState(problems: SearchProblem[], field: string): { attrs: Raw; message: Raw | string } {
  const problem = problemOf(problems, field);
  if (!problem) return { attrs: html``, message: "" };
  return {
    attrs: html` aria-invalid="true" aria-describedby="${field}-error"`,
    message: html`<p class="error" id="${field}-error">${problem.hint}</p>`,
  };
}

function textField(
  input: SearchPageInput,
  field: string,
  opts: { type?: string; numeric?: boolean; placeholder?: string } = {},
): Raw {
  const s = fieldState(input.problems, field);
  return html`<div class="field"><label for="${field}">${LABELS[field]!}</label>${s.message}
<input id="${field}" name="${field}" type="${opts.type ?? "text"}" value="${input.raw[field] ?? ""}"${opts.numeric ? html` inputmode="numeric" autocomplete="off"` : ""}${opts.placeholder ? html` placeholder="${opts.placeholder}"` : ""}${s.attrs}></div>`;
}

function select(input: SearchPageInput, field: string, options: [string, string][]): Raw {
  const s = fieldState(input.problems, field);
  const current = (input.raw[field] ?? "").trim().toLowerCase();
  return html`<div class="field"><label for="${field}">${LABELS[field]!}</label>${s.message}
<select id="${field}" name="${field}"${s.attrs}>${options.map(([value, text]) => html`<option value="${value}"${value.toLowerCase() === current ? html` selected` : ""}>${text}</option>`)}</select></div>`;
}
/** Facet values with their counts, plus the current one if the facets lack it (a filter in use stays visible). */
function facetOptions(
  values: { value: string; count: number }[],
  current: string | undefined,
  anyLabel: string,
): [string, string][] {
  const list: [string, string][] = [...values]
    .sort((a, b) => a.value.localeCompare(b.value))
    .map((v) => [v.value, `${v.value} (${v.count})`]);
  const now = current?.trim();
  if (now && !list.some(([v]) => v.toLowerCase() === now.toLowerCase())) list.push([now, now]);
  return [["", anyLabel], ...list];
}

function checkbox(input: SearchPageInput, field: string, label: string): Raw {
  const s = fieldState(input.problems, field);
  return html`<div class="field check">${s.message}<input type="checkbox" id="${field}" name="${field}" value="true"${input.raw[field] === "true" ? html` checked` : ""}${s.attrs}><label for="${field}">${label}</label></div>`;
}

const moneyShort = (n: number) => (n >= 1_000_000 ? `$${n / 1_000_000}M` : n >= 1000 ? `$${n / 1000}k` : `$${n}`);

/** A band's name: "$100k to $250k", "under $100k", "$5M and up". */
export function bandLabel(band: { from: number; below: number | null }): string {
  if (band.from === 0 && band.below !== null) return `Under ${moneyShort(band.below)}`;
  if (band.below === null) return `${moneyShort(band.from)} and up`;
  return `${moneyShort(band.from)} to ${moneyShort(band.below)}`;
}

/** The search with some filters set (and the page reset): what a facet link opens. */
function withFilters(input: SearchPageInput, set: Record<string, string>, clear: string[] = []): string {
  const raw: Record<string, string> = { ...input.raw };
  for (const f of clear) delete raw[f];
  return `/listings${searchQueryString({ ...raw, ...set }, 1)}`;
}

/** Beside the filters: how many listings each business type, state and price band holds for this search. */
function facetPanel(input: SearchPageInput): Raw | string {
  const { facets } = input;
  if (facets.businessType.length === 0 && facets.state.length === 0) return "";
  const list = (title: string, items: { label: string; count: number; href: string; current: boolean }[]) =>
    items.length
      ? html`<h3>${title}</h3><ul>${items.map((i) => html`<li>${i.current ? html`<strong aria-current="true">${i.label}</strong>` : html`<a href="${i.href}">${i.label}</a>`} <span class="muted">(${i.count})</span></li>`)}</ul>`
      : "";
  const same = (a: string | undefined, b: string) => (a ?? "").trim().toLowerCase() === b.toLowerCase();
  return html`<aside class="facets" aria-labelledby="facets-heading"><h2 id="facets-heading">Refine</h2>
${list(
  "Business type",
  facets.businessType.map((f) => ({
    label: f.value,
    count: f.count,
    href: withFilters(input, { businessType: f.value }),
    current: same(input.raw.businessType, f.value),
  })),
)}
${list(
  "State",
  facets.state.map((f) => ({
    label: f.value,
    count: f.count,
    href: withFilters(input, { state: f.value }),
    current: same(input.raw.state, f.value),
  })),
)}
${list(
  "Asking price",
  facets.priceBand
    .filter((b) => b.count > 0)
    .map((b) => ({
      label: bandLabel(b),
      count: b.count,
      href: withFilters(
        input,
        { minPrice: String(b.from), ...(b.below !== null ? { maxPrice: String(b.below - 0.01) } : {}) },
        ["minPrice", "maxPrice"],
      ),
      current:
        input.raw.minPrice === String(b.from) &&
        (b.below === null ? !input.raw.maxPrice : input.raw.maxPrice === String(b.below - 0.01)),
    })),
)}
</aside>`;
}

function range(input: SearchPageInput, min: string, max: string, legend: string): Raw {
  return html`<fieldset class="range"><legend>${legend}</legend><div class="pair">${textField(input, min, { numeric: true, placeholder: "Any" })}${textField(input, max, { numeric: true, placeholder: "Any" })}</div></fieldset>`;
}

function searchForm(input: SearchPageInput): Raw {
  const filtersInUse = FILTER_FIELDS.some((f) => (input.raw[f] ?? "").trim() !== "") || input.problems.length > 0;
  return html`<form class="search-form" method="get" action="/listings" role="search" aria-label="Search businesses for sale">
<div class="query">${textField(input, "q", { type: "search", placeholder: "e.g. bakery, HVAC, franchise" })}<button type="submit">Search</button></div>
<details class="more"${filtersInUse ? html` open` : ""}><summary>Filters and sorting</summary>
<div class="filters">
${select(input, "businessType", facetOptions(input.facets.businessType, input.raw.businessType, "Any type"))}
${select(input, "state", facetOptions(input.facets.state, input.raw.state, "Any state"))}
${textField(input, "city")}
${range(input, "minPrice", "maxPrice", "Asking price ($)")}
${range(input, "minRevenue", "maxRevenue", "Yearly revenue ($)")}
${range(input, "minSde", "maxSde", "Seller's discretionary earnings ($)")}
<fieldset class="range"><legend>Distance</legend>
${textField(input, "near", { placeholder: "e.g. Austin, TX or 78701" })}${input.nearLabel ? html`<p class="muted" id="near-found">Measured from ${input.nearLabel}.</p>` : ""}
<div class="pair">${textField(input, "radius", { numeric: true, placeholder: "25" })}${select(input, "radiusUnit", [
    ["", "miles"],
    ["km", "km"],
  ])}</div>
<p class="muted small">${GEO_ATTRIBUTION.text} <a href="${GEO_ATTRIBUTION.geonames.url}">GeoNames</a>, <a href="${GEO_ATTRIBUTION.licenceUrl}">${GEO_ATTRIBUTION.geonames.licence}</a>; <a href="${GEO_ATTRIBUTION.census.url}">Census gazetteer</a>.</p>
</fieldset>
${checkbox(input, "financingAvailable", "Seller financing available")}
${checkbox(input, "sbaPrequalified", "SBA pre-qualified")}
${checkbox(input, "realEstateIncluded", "Real estate included")}
${checkbox(input, "priceReduced", `Price reduced in the last ${PRICE_REDUCED_DAYS} days`)}
${select(input, "listedWithinDays", [
  ["", "Any time"],
  ["1", "Last day"],
  ["7", "Last 7 days"],
  ["30", "Last 30 days"],
  ["90", "Last 90 days"],
])}
${select(input, "underContract", [
  ["", "Include them"],
  ["false", "Leave them out"],
  ["true", "Only under contract"],
])}
${select(input, "sort", SORT_OPTIONS)}
</div>
<button type="submit">Apply filters</button>
</details>
</form>`;
}

function errorSummary(problems: SearchProblem[]): Raw {
  return html`<div class="error-summary" role="alert" aria-labelledby="problems-heading"><h2 id="problems-heading">Please check the search</h2><ul>
${problems.map((p) => (p.field === "page" ? html`<li>${p.hint}</li>` : html`<li><a href="#${p.field}">${LABELS[p.field] ?? p.field}</a>: ${p.hint}</li>`))}
</ul></div>`;
}

function pager(input: SearchPageInput, total: number): Raw | string {
  const pages = Math.min(Math.ceil(total / SEARCH_PAGE_SIZE), Math.floor(MAX_SEARCH_WINDOW / SEARCH_PAGE_SIZE));
  if (pages <= 1 && input.page === 1) return "";
  const link = (n: number) => `/listings${searchQueryString(input.raw, n)}`;
  return html`<nav class="pager" aria-label="Result pages">
${input.page > 1 ? html`<a href="${link(input.page - 1)}" rel="prev">← Previous page</a>` : html`<span></span>`}
<span>Page ${input.page} of ${Math.max(pages, input.page)}</span>
${input.page < pages ? html`<a href="${link(input.page + 1)}" rel="next">Next page →</a>` : html`<span></span>`}
</nav>`;
}

function results(input: SearchPageInput): Raw | string {
  if (input.unavailable) {
    return html`<div class="notice" role="status"><h2>Search is taking a break</h2><p>Search is temporarily unavailable. Please try again in a moment.</p></div>`;
  }
  const result = input.result;
  if (!result) return "";
  const q = input.raw.q?.trim();
  const count = `${result.total} ${result.total === 1 ? "business" : "businesses"} for sale`;
  return html`<section aria-labelledby="results-heading"><h2 id="results-heading">${q ? html`${count} matching “${q}”` : count}</h2>
${
  result.results.length
    ? listingCards(result.results)
    : html`<p>No businesses match this search${input.page > 1 ? " on this page" : ""}.</p><p>Try fewer words or filters, or <a href="/listings">see every business for sale</a>.</p>`
}
${pager(input, result.total)}
${saveForm(input)}
</section>`;
}

/** "Get new matches by e-mail": the search as hidden fields and an address (docs/buyers-and-search.md). */
function saveForm(input: SearchPageInput): Raw {
  const fields = FORM_FIELDS.filter((f) => (input.raw[f] ?? "").trim() !== "");
  return html`<form class="save-search" method="post" action="/saved-searches" aria-labelledby="save-heading">
<h2 id="save-heading">Get new matches by e-mail</h2>
${fields.map((f) => html`<input type="hidden" name="${f}" value="${input.raw[f]!.trim()}">`)}
<div class="field"><label for="save-email">Your e-mail address</label>
<input id="save-email" name="email" type="email" autocomplete="email" required></div>
<div class="hp" aria-hidden="true"><label for="save-website">Leave this empty</label><input id="save-website" name="website" tabindex="-1" autocomplete="off"></div>
<button type="submit">Save this search</button>
<p class="muted small">We e-mail you a link to confirm first; then at most one e-mail a day with new and price-reduced listings. One click unsubscribes.</p>
</form>`;
}

export function renderSearchPage(input: SearchPageInput): Response {
  const q = input.raw.q?.trim();
  const filtered = FILTER_FIELDS.some((f) => (input.raw[f] ?? "").trim() !== "");
  const title = `${q ? `“${q}” – ` : ""}Businesses for sale${input.page > 1 ? ` – page ${input.page}` : ""} | ${SITE_NAME}`;
  const home = input.path === "/" && !q && !filtered && input.page === 1;
  const canonicalUrl = home ? `${input.base}/` : `${input.base}/listings${searchQueryString(input.raw, input.page)}`;
  const body = html`<h1>Businesses for sale</h1>
<p class="muted">Restaurants, shops, services and more, listed by business brokers.</p>
${input.problems.length ? errorSummary(input.problems) : ""}
${searchForm(input)}
<div class="search-body">${facetPanel(input)}
${results(input)}</div>`;
  const status = input.problems.length ? 400 : input.unavailable ? 503 : 200;
  return page(
    {
      title,
      description:
        "Search businesses for sale by type, place and distance, price, revenue, seller's discretionary earnings, SBA pre-qualification, real estate and price cuts.",
      canonicalUrl,
      // Searches with words are endless variations of the listing pages: crawlers follow them, but do not index them.
      noIndex: Boolean(q) || status !== 200,
    },
    body,
    status,
    input.unavailable ? { "retry-after": "5" } : {},
  );
}
