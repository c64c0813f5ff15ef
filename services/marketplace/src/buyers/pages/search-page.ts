// The search page (/ and /listings): a GET form (works without JavaScript; the URL is the search, so it can be
// shared and bookmarked), result cards, numbered pages. Problems are shown beside their fields.
import type { SearchResponse } from "@pss/contracts";
import type { SearchFacets } from "../listing-search.ts";
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
  underContract: "Under contract",
  sort: "Sort by",
  page: "Page",
};
const FORM_FIELDS = Object.keys(LABELS).filter((f) => f !== "page");
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
  facets: SearchFacets;
  unavailable: boolean;
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
/** Facet values plus the current one if the facets lack it (a filter in use stays visible). */
function facetOptions(values: string[], current: string | undefined, anyLabel: string): [string, string][] {
  const list = [...values];
  const now = current?.trim();
  if (now && !list.some((v) => v.toLowerCase() === now.toLowerCase())) list.push(now);
  return [["", anyLabel], ...list.map((v): [string, string] => [v, v])];
}

function range(input: SearchPageInput, min: string, max: string, legend: string): Raw {
  return html`<fieldset class="range"><legend>${legend}</legend><div class="pair">${textField(input, min, { numeric: true, placeholder: "Any" })}${textField(input, max, { numeric: true, placeholder: "Any" })}</div></fieldset>`;
}

function searchForm(input: SearchPageInput): Raw {
  const filtersInUse = FILTER_FIELDS.some((f) => (input.raw[f] ?? "").trim() !== "") || input.problems.length > 0;
  const financing = input.raw.financingAvailable === "true";
  const fin = fieldState(input.problems, "financingAvailable");
  return html`<form class="search-form" method="get" action="/listings" role="search" aria-label="Search businesses for sale">
<div class="query">${textField(input, "q", { type: "search", placeholder: "e.g. bakery, HVAC, franchise" })}<button type="submit">Search</button></div>
<details class="more"${filtersInUse ? html` open` : ""}><summary>Filters and sorting</summary>
<div class="filters">
${select(input, "businessType", facetOptions(input.facets.businessTypes, input.raw.businessType, "Any type"))}
${select(input, "state", facetOptions(input.facets.states, input.raw.state, "Any state"))}
${textField(input, "city")}
${range(input, "minPrice", "maxPrice", "Asking price ($)")}
${range(input, "minRevenue", "maxRevenue", "Yearly revenue ($)")}
${range(input, "minSde", "maxSde", "Seller's discretionary earnings ($)")}
<div class="field check">${fin.message}<input type="checkbox" id="financingAvailable" name="financingAvailable" value="true"${financing ? html` checked` : ""}${fin.attrs}><label for="financingAvailable">Seller financing available</label></div>
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
</section>`;
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
${results(input)}`;
  const status = input.problems.length ? 400 : input.unavailable ? 503 : 200;
  return page(
    {
      title,
      description: "Search businesses for sale by type, place, price, revenue and seller's discretionary earnings.",
      canonicalUrl,
      // Searches with words are endless variations of the listing pages: crawlers follow them, but do not index them.
      noIndex: Boolean(q) || status !== 200,
    },
    body,
    status,
    input.unavailable ? { "retry-after": "5" } : {},
  );
}
