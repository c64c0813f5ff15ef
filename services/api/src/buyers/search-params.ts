// GET /v1/listings query parameters: every value validated with a sentence that says what is wrong.
// Cursors are opaque base64url JSON: the sort values of the last hit (search_after) plus a fingerprint of the
// query, so a cursor is never applied to a different search.
import { codePointLength, SEARCH_PAGE, SEARCH_SORTS, type SearchSort } from "@pss/contracts";
import { BadRequestError } from "../http/errors.ts";

export interface SearchRequest {
  q: string | null;
  businessType: string | null;
  state: string | null;
  city: string | null;
  minPrice: number | null;
  maxPrice: number | null;
  sort: SearchSort;
  limit: number;
  /** search_after values from the cursor. */
  after: unknown[] | null;
}

const ALLOWED = ["q", "businessType", "state", "city", "minPrice", "maxPrice", "sort", "cursor", "limit"];
const MAX_TEXT = 200;
const MAX_PRICE = 1e12;

function text(query: Record<string, unknown>, name: string): string | null {
  const raw = query[name];
  if (raw === undefined) return null;
  if (typeof raw !== "string") throw new BadRequestError(`${name} may be given once`);
  const value = raw.trim();
  // Characters (code points), as the OpenAPI document counts them.
  if (value.length > MAX_TEXT && codePointLength(value) > MAX_TEXT) throw new BadRequestError(`${name} must be at most ${MAX_TEXT} characters`);
  return value === "" ? null : value;
}

function price(query: Record<string, unknown>, name: string): number | null {
  const raw = text(query, name);
  if (raw === null) return null;
  if (!/^\d+(\.\d{1,2})?$/.test(raw) || Number(raw) > MAX_PRICE) throw new BadRequestError(`${name} must be a non-negative number up to ${MAX_PRICE}, e.g. 250000`);
  return Number(raw);
}

/** Identifies what a cursor may continue: the same query, filters and sort. */
function fingerprint(r: Omit<SearchRequest, "after" | "limit">): string {
  const key = JSON.stringify([r.q?.toLowerCase() ?? null, r.businessType?.toLowerCase() ?? null, r.state?.toLowerCase() ?? null, r.city?.toLowerCase() ?? null, r.minPrice, r.maxPrice, r.sort]);
  return new Bun.CryptoHasher("sha256").update(key).digest("base64url").slice(0, 16);
}

export function encodeSearchCursor(request: SearchRequest, sortValues: unknown[]): string {
  return Buffer.from(JSON.stringify({ f: fingerprint(request), a: sortValues })).toString("base64url");
}

export function parseSearchQuery(query: Record<string, unknown>): SearchRequest {
  const unknown = Object.keys(query).filter((k) => !ALLOWED.includes(k));
  if (unknown.length) throw new BadRequestError(`Unknown query parameter ${unknown[0]}; allowed: ${ALLOWED.join(", ")}`);

  const q = text(query, "q");
  const sortRaw = text(query, "sort");
  if (sortRaw !== null && !(SEARCH_SORTS as readonly string[]).includes(sortRaw)) throw new BadRequestError(`sort must be one of ${SEARCH_SORTS.join(", ")}`);
  // Without words to rank by, "relevance" has nothing to rank: newest first.
  const sort: SearchSort = sortRaw === null || (sortRaw === "relevance" && q === null) ? (q === null ? "newest" : "relevance") : (sortRaw as SearchSort);

  let limit: number = SEARCH_PAGE.default;
  const limitRaw = text(query, "limit");
  if (limitRaw !== null) {
    limit = Number(limitRaw);
    if (!/^\d+$/.test(limitRaw) || limit < 1 || limit > SEARCH_PAGE.max) throw new BadRequestError(`limit must be an integer from 1 to ${SEARCH_PAGE.max}`);
  }

  const minPrice = price(query, "minPrice");
  const maxPrice = price(query, "maxPrice");
  if (minPrice !== null && maxPrice !== null && minPrice > maxPrice) throw new BadRequestError("minPrice must not be greater than maxPrice");

  const request: SearchRequest = { q, businessType: text(query, "businessType"), state: text(query, "state"), city: text(query, "city"), minPrice, maxPrice, sort, limit, after: null };

  const cursor = text(query, "cursor");
  if (cursor !== null) {
    let decoded: { f?: unknown; a?: unknown };
    try {
      decoded = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    } catch {
      throw new BadRequestError("cursor is not valid; pass nextCursor from the previous page unchanged");
    }
    const valuesOk = Array.isArray(decoded?.a) && decoded.a.length >= 1 && decoded.a.length <= 3 && decoded.a.every((v) => typeof v === "number" || typeof v === "string");
    if (!valuesOk) throw new BadRequestError("cursor is not valid; pass nextCursor from the previous page unchanged");
    if (decoded.f !== fingerprint(request)) throw new BadRequestError("cursor belongs to a different search; keep q, filters and sort unchanged while paging");
    request.after = decoded.a as unknown[];
  }
  return request;
}
