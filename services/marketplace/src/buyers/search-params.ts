// Search query parameters, for GET /v1/listings (JSON: the first problem is a 400) and the search page (HTML:
// every problem is shown beside its field). One reader, so both accept and refuse the same things.
// Cursors are opaque base64url JSON: the sort values of the last hit (search_after) plus a fingerprint of the
// query, so a cursor is never applied to a different search.
import {
  codePointLength,
  isPageCursorText,
  LISTED_WITHIN_DAYS_MAX,
  RADIUS_UNITS,
  SEARCH_PAGE,
  SEARCH_RADIUS,
  SEARCH_SORTS,
  type RadiusUnit,
  type SearchSort,
} from "@pss/contracts";
import type { Place } from "@pss/geo";
import { BadRequestError } from "@pss/http-kit";

export interface SearchRequest {
  q: string | null;
  businessType: string | null;
  state: string | null;
  city: string | null;
  minPrice: number | null;
  maxPrice: number | null;
  minRevenue: number | null;
  maxRevenue: number | null;
  minSde: number | null;
  maxSde: number | null;
  /** true: only listings offering seller financing; false: only listings that do not. */
  financingAvailable: boolean | null;
  /** true: only listings under contract; false: none under contract. */
  underContract: boolean | null;
  /** true: only listings pre-qualified for an SBA loan; false: only those not. */
  sbaPrequalified: boolean | null;
  /** true: only listings sold with their (owned) real estate; false: only those not. */
  realEstateIncluded: boolean | null;
  /** true: only listings whose price went down in the last PRICE_REDUCED_DAYS days; false: only those not. */
  priceReduced: boolean | null;
  /** Only listings that went live in the last N days. */
  listedWithinDays: number | null;
  /** Only listings within `radiusKm` of the place the buyer named. */
  near: NearFilter | null;
  sort: SearchSort;
  limit: number;
  /** search_after values from the cursor. */
  after: unknown[] | null;
  /** Hits to skip (the search page's numbered pages; the JSON API pages with cursors only). */
  from?: number;
  /**
   * A saved search's digest only (never from a URL): listings that went live or were reduced in price after
   * `changedAfter` and up to `changedThrough` (ISO 8601).
   */
  changedAfter?: string;
  changedThrough?: string;
}

export interface NearFilter {
  /** As typed (trimmed): what the URL and the form keep. */
  text: string;
  place: Place;
  radius: number;
  unit: RadiusUnit;
  radiusKm: number;
}

/** Finds what a buyer typed as "near" (a gazetteer's find); null: no such place. */
export type FindPlace = (text: string) => Place | null;

const KM_PER_MILE = 1.609344;

/** A parameter that cannot be used, with the API's sentence (`message`) and a buyer's (`hint`). */
export interface SearchProblem {
  field: string;
  message: string;
  hint: string;
}

export const SEARCH_PARAMETERS = [
  "q",
  "businessType",
  "state",
  "city",
  "minPrice",
  "maxPrice",
  "minRevenue",
  "maxRevenue",
  "minSde",
  "maxSde",
  "financingAvailable",
  "underContract",
  "sbaPrequalified",
  "realEstateIncluded",
  "priceReduced",
  "listedWithinDays",
  "near",
  "radius",
  "radiusUnit",
  "sort",
  "cursor",
  "limit",
] as const;
const MAX_TEXT = 200;
const MAX_AMOUNT = 1e12;
const RANGES = [
  ["minPrice", "maxPrice", "asking price"],
  ["minRevenue", "maxRevenue", "revenue"],
  ["minSde", "maxSde", "seller's discretionary earnings"],
] as const;
/** OpenSearch's default max_result_window: from + size beyond it is refused. */
export const MAX_SEARCH_WINDOW = 10_000;

interface ReadOptions {
  /** The page's form: "$250,000" is read as 250000. */
  lenientAmounts: boolean;
  findPlace: FindPlace;
}

class Reader {
  readonly problems: SearchProblem[] = [];
  constructor(
    private readonly query: Record<string, unknown>,
    private readonly opts: ReadOptions,
  ) {}

  fail(field: string, message: string, hint: string): null {
    if (!this.problems.some((p) => p.field === field)) this.problems.push({ field, message, hint });
    return null;
  }

  text(name: string): string | null {
    const raw = this.query[name];
    if (raw === undefined) return null;
    if (typeof raw !== "string") return this.fail(name, `${name} may be given once`, "Give this only once.");
    const value = raw.trim();
    // Characters (code points), as the OpenAPI document counts them.
    if (value.length > MAX_TEXT && codePointLength(value) > MAX_TEXT)
      return this.fail(name, `${name} must be at most ${MAX_TEXT} characters`, `Use at most ${MAX_TEXT} characters.`);
    return value === "" ? null : value;
  }

  amount(name: string): number | null {
    let raw = this.text(name);
    if (raw === null) return null;
    if (this.opts.lenientAmounts) raw = raw.replace(/^\$/, "").replace(/[,\s_]/g, "");
    if (!/^\d+(\.\d{1,2})?$/.test(raw) || Number(raw) > MAX_AMOUNT) {
      return this.fail(
        name,
        `${name} must be a non-negative number up to ${MAX_AMOUNT}, e.g. 250000`,
        "Enter an amount in dollars, e.g. 250000.",
      );
    }
    return Number(raw);
  }

  flag(name: string): boolean | null {
    const raw = this.text(name);
    if (raw === null) return null;
    if (raw !== "true" && raw !== "false")
      return this.fail(name, `${name} must be true or false`, "Choose one of the options.");
    return raw === "true";
  }

  /** A whole number from `min` to `max`. */
  integer(name: string, min: number, max: number, hint: string): number | null {
    const raw = this.text(name);
    if (raw === null) return null;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min || n > max)
      return this.fail(name, `${name} must be an integer from ${min} to ${max}`, hint);
    return n;
  }

  /** near, radius and radiusUnit together: a known place and a distance, or nothing. */
  near(): NearFilter | null {
    const text = this.text("near");
    const radiusRaw = this.text("radius");
    const unitRaw = this.text("radiusUnit");
    let unit: RadiusUnit = "mi";
    if (unitRaw !== null) {
      if (!(RADIUS_UNITS as readonly string[]).includes(unitRaw))
        return this.fail("radiusUnit", `radiusUnit must be one of ${RADIUS_UNITS.join(", ")}`, "Choose miles or km.");
      unit = unitRaw as RadiusUnit;
    }
    let radius: number = SEARCH_RADIUS.default;
    if (radiusRaw !== null) {
      const n = Number(radiusRaw);
      if (!/^\d+(\.\d{1,2})?$/.test(radiusRaw) || n < 1 || n > SEARCH_RADIUS.max)
        return this.fail(
          "radius",
          `radius must be a number from 1 to ${SEARCH_RADIUS.max}`,
          `Enter a distance from 1 to ${SEARCH_RADIUS.max}.`,
        );
      radius = n;
    }
    if (text === null) {
      if (radiusRaw !== null || unitRaw !== null)
        this.fail("near", "radius and radiusUnit need near (the place to measure from)", "Enter a city or ZIP code.");
      return null;
    }
    const place = this.opts.findPlace(text);
    if (!place)
      return this.fail(
        "near",
        `near: no known place is called '${text.slice(0, 60)}'; give a 5-digit US ZIP code, 'City, ST' or 'City, country code'`,
        "We do not know this place. Enter a US ZIP code, or a city with its state, e.g. Austin, TX.",
      );
    return { text, place, radius, unit, radiusKm: unit === "km" ? radius : radius * KM_PER_MILE };
  }
}

function readFilters(query: Record<string, unknown>, opts: ReadOptions): { request: SearchRequest; reader: Reader } {
  const r = new Reader(query, opts);
  const q = r.text("q");
  const sortRaw = r.text("sort");
  let sort: SearchSort = q === null ? "newest" : "relevance";
  if (sortRaw !== null) {
    if (!(SEARCH_SORTS as readonly string[]).includes(sortRaw))
      r.fail("sort", `sort must be one of ${SEARCH_SORTS.join(", ")}`, "Choose one of the orders.");
    // Without words to rank by, "relevance" has nothing to rank: newest first.
    else sort = sortRaw === "relevance" && q === null ? "newest" : (sortRaw as SearchSort);
  }

  let limit: number = SEARCH_PAGE.default;
  const limitRaw = r.text("limit");
  if (limitRaw !== null) {
    const n = Number(limitRaw);
    if (!/^\d+$/.test(limitRaw) || n < 1 || n > SEARCH_PAGE.max)
      r.fail(
        "limit",
        `limit must be an integer from 1 to ${SEARCH_PAGE.max}`,
        `Choose 1 to ${SEARCH_PAGE.max} results per page.`,
      );
    else limit = n;
  }

  const amounts: Record<string, number | null> = {};
  for (const [min, max, what] of RANGES) {
    amounts[min] = r.amount(min);
    amounts[max] = r.amount(max);
    if (amounts[min] !== null && amounts[max] !== null && amounts[min]! > amounts[max]!) {
      r.fail(min, `${min} must not be greater than ${max}`, `The lowest ${what} must not be above the highest.`);
    }
  }

  const request: SearchRequest = {
    q,
    businessType: r.text("businessType"),
    state: r.text("state"),
    city: r.text("city"),
    minPrice: amounts.minPrice!,
    maxPrice: amounts.maxPrice!,
    minRevenue: amounts.minRevenue!,
    maxRevenue: amounts.maxRevenue!,
    minSde: amounts.minSde!,
    maxSde: amounts.maxSde!,
    financingAvailable: r.flag("financingAvailable"),
    underContract: r.flag("underContract"),
    sbaPrequalified: r.flag("sbaPrequalified"),
    realEstateIncluded: r.flag("realEstateIncluded"),
    priceReduced: r.flag("priceReduced"),
    listedWithinDays: r.integer(
      "listedWithinDays",
      1,
      LISTED_WITHIN_DAYS_MAX,
      `Choose 1 to ${LISTED_WITHIN_DAYS_MAX} days.`,
    ),
    near: r.near(),
    sort,
    limit,
    after: null,
  };
  return { request, reader: r };
}

/** Identifies what a cursor may continue: the same query, filters and sort. */
function fingerprint(r: SearchRequest): string {
  const key = [
    r.q?.toLowerCase() ?? null,
    r.businessType?.toLowerCase() ?? null,
    r.state?.toLowerCase() ?? null,
    r.city?.toLowerCase() ?? null,
    r.minPrice,
    r.maxPrice,
    r.sort,
  ] as unknown[];
  // Filters added later extend the key only when used, so cursors handed out before them stay valid.
  const later = [r.minRevenue, r.maxRevenue, r.minSde, r.maxSde, r.financingAvailable, r.underContract];
  if (later.some((v) => v !== null)) key.push(later);
  const issue41 = [
    r.sbaPrequalified,
    r.realEstateIncluded,
    r.priceReduced,
    r.listedWithinDays,
    r.near ? [r.near.text.toLowerCase(), r.near.radiusKm] : null,
  ];
  if (issue41.some((v) => v !== null)) key.push(issue41);
  return new Bun.CryptoHasher("sha256").update(JSON.stringify(key)).digest("base64url").slice(0, 16);
}

export function encodeSearchCursor(request: SearchRequest, sortValues: unknown[]): string {
  return Buffer.from(JSON.stringify({ f: fingerprint(request), a: sortValues })).toString("base64url");
}

function decodeCursor(cursor: string, request: SearchRequest): unknown[] {
  let decoded: { f?: unknown; a?: unknown };
  try {
    if (!isPageCursorText(cursor)) throw new Error("not base64url");
    decoded = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw new BadRequestError("cursor is not valid; pass nextCursor from the previous page unchanged");
  }
  const valuesOk =
    Array.isArray(decoded?.a) &&
    decoded.a.length >= 1 &&
    decoded.a.length <= 3 &&
    decoded.a.every((v) => typeof v === "number" || typeof v === "string");
  if (!valuesOk) throw new BadRequestError("cursor is not valid; pass nextCursor from the previous page unchanged");
  if (decoded.f !== fingerprint(request))
    throw new BadRequestError("cursor belongs to a different search; keep q, filters and sort unchanged while paging");
  return decoded.a as unknown[];
}

/** GET /v1/listings: unknown parameters and the first problem are a 400. */
export function parseSearchQuery(query: Record<string, unknown>, findPlace: FindPlace): SearchRequest {
  const unknown = Object.keys(query).filter((k) => !(SEARCH_PARAMETERS as readonly string[]).includes(k));
  if (unknown.length)
    throw new BadRequestError(`Unknown query parameter ${unknown[0]}; allowed: ${SEARCH_PARAMETERS.join(", ")}`);
  const { request, reader } = readFilters(query, { lenientAmounts: false, findPlace });
  reader.text("cursor");
  const [problem] = reader.problems;
  // The first problem is the message; details name every one (a rule across two fields, e.g. minPrice above
  // maxPrice, is stated in the operation's description, which no schema can carry).
  if (problem)
    throw new BadRequestError(
      problem.message,
      reader.problems.map((p) => ({ path: p.field, message: p.message })),
    );
  // Exactly as handed out, not trimmed: an empty or blank cursor is refused like any other the API never gave.
  if (typeof query.cursor === "string") request.after = decodeCursor(query.cursor, request);
  return request;
}

/** The search page: the same filters, numbered pages, other parameters (e.g. utm_source) ignored. */
export function parseSearchPage(
  query: Record<string, unknown>,
  pageSize: number,
  findPlace: FindPlace,
): { request: SearchRequest; page: number; problems: SearchProblem[] } {
  const { request, reader } = readFilters(
    { ...query, limit: undefined, cursor: undefined },
    { lenientAmounts: true, findPlace },
  );
  request.limit = pageSize;
  const lastPage = Math.floor(MAX_SEARCH_WINDOW / pageSize);
  let page = 1;
  const pageRaw = reader.text("page");
  if (pageRaw !== null) {
    const n = Number(pageRaw);
    if (!/^\d+$/.test(pageRaw) || n < 1)
      reader.fail("page", "page must be a positive integer", "This page does not exist.");
    else if (n > lastPage)
      reader.fail(
        "page",
        `page must be at most ${lastPage}`,
        `Only the first ${lastPage} pages can be shown; narrow the search to see the rest.`,
      );
    else page = n;
  }
  request.from = (page - 1) * pageSize;
  return { request, page, problems: reader.problems };
}

/** The query as sent, repeated names kept as arrays (the framework would silently keep one of them). */
export function rawQuery(request: Request): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URL(request.url).searchParams) {
    const seen = out[k];
    out[k] = seen === undefined ? v : [...(Array.isArray(seen) ? seen : [seen]), v];
  }
  return out;
}
