// Opaque cursors over the commit-safe write position (write_xid, id): a stable order in which every record
// appears once per pass, and in which nothing committed later can appear behind a reader (records/commit-safe-page.ts).
import { isDateTime, isPageCursorText } from "@pss/contracts";
import { BadRequestError } from "@pss/http-kit";
import { recordBound } from "./instants.ts";

/** A place in the order (write_xid, id); a page holds what comes strictly after it. */
export interface PagePosition {
  xid: string;
  id: string;
}

export interface PageRequest {
  limit: number;
  after: PagePosition | null;
  updatedSince: Date | null;
}

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 500;

const CURSOR_VERSION = "w1";
const BAD_CURSOR = "cursor is not valid; pass nextCursor from the previous page unchanged";
const MAX_XID8 = 2n ** 64n - 1n;

/** The cursor carries the pass's updatedSince, so later pages filter the same way with or without it repeated. */
export function encodeCursor(position: PagePosition, updatedSince: Date | null): string {
  return Buffer.from(
    JSON.stringify([CURSOR_VERSION, position.xid, position.id, updatedSince?.toISOString() ?? null]),
  ).toString("base64url");
}

const validDate = (value: unknown): value is string =>
  typeof value === "string" && new Date(value).getUTCFullYear() >= 1;

function decodeCursor(cursor: string): { after: PagePosition | null; updatedSince: Date | null } {
  let parsed: unknown;
  try {
    if (!isPageCursorText(cursor)) throw new Error("not base64url");
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString());
  } catch {
    throw new BadRequestError(BAD_CURSOR);
  }
  if (!Array.isArray(parsed)) throw new BadRequestError(BAD_CURSOR);
  if (parsed.length === 4 && parsed[0] === CURSOR_VERSION) {
    const [, xid, id, since] = parsed;
    const ok =
      typeof xid === "string" &&
      /^\d{1,20}$/.test(xid) &&
      BigInt(xid) <= MAX_XID8 &&
      typeof id === "string" &&
      /^\d{1,18}$/.test(id) &&
      (since === null || validDate(since));
    if (!ok) throw new BadRequestError(BAD_CURSOR);
    return { after: { xid, id }, updatedSince: since === null ? null : new Date(since) };
  }
  // A cursor from before the commit-safe order ([updatedAt, id]): restart from that instant (a superset: some
  // records may come again, none is skipped).
  if (parsed.length === 2 && validDate(parsed[0]) && typeof parsed[1] === "string" && /^\d{1,18}$/.test(parsed[1])) {
    return { after: null, updatedSince: new Date(parsed[0]) };
  }
  throw new BadRequestError(BAD_CURSOR);
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_PAGE_SIZE;
  const limit = Number(raw);
  if (!/^\d+$/.test(raw) || limit < 1 || limit > MAX_PAGE_SIZE)
    throw new BadRequestError(`limit must be an integer from 1 to ${MAX_PAGE_SIZE}`);
  return limit;
}

export function parsePageQuery(query: Record<string, string | undefined>): PageRequest {
  const unknown = Object.keys(query).filter((k) => !["limit", "cursor", "updatedSince"].includes(k));
  if (unknown.length)
    throw new BadRequestError(`Unknown query parameter ${unknown[0]}; allowed: limit, cursor, updatedSince`);
  const limit = parseLimit(query.limit);
  let updatedSince: Date | null = null;
  if (query.updatedSince !== undefined) {
    if (!isDateTime(query.updatedSince))
      throw new BadRequestError(
        "updatedSince must be an ISO 8601 date-time with a time zone, e.g. 2024-05-01T00:00:00Z",
      );
    // Before 1970 (even year 0 in UTC after an offset) means every record: none is older.
    updatedSince = recordBound(query.updatedSince);
  }
  if (query.cursor === undefined) return { limit, after: null, updatedSince };
  const fromCursor = decodeCursor(query.cursor);
  return { limit, after: fromCursor.after, updatedSince: updatedSince ?? fromCursor.updatedSince };
}

// Change history pages (newest first): the same limit and opaque-cursor conventions, over the history row's ID.
// History rows are only ever appended, so "older than the last entry returned" is a stable position.
const HISTORY_CURSOR_VERSION = "h1";

export interface HistoryPageRequest {
  limit: number;
  /** Entries strictly older than this history row ID; null: from the newest. */
  beforeId: string | null;
}

export function encodeHistoryCursor(lastId: string): string {
  return Buffer.from(JSON.stringify([HISTORY_CURSOR_VERSION, lastId])).toString("base64url");
}

export function parseHistoryQuery(query: Record<string, string | undefined>): HistoryPageRequest {
  const unknown = Object.keys(query).filter((k) => !["limit", "cursor"].includes(k));
  if (unknown.length) throw new BadRequestError(`Unknown query parameter ${unknown[0]}; allowed: limit, cursor`);
  const limit = parseLimit(query.limit);
  if (query.cursor === undefined) return { limit, beforeId: null };
  let parsed: unknown;
  try {
    if (!isPageCursorText(query.cursor)) throw new Error("not base64url");
    parsed = JSON.parse(Buffer.from(query.cursor, "base64url").toString());
  } catch {
    throw new BadRequestError(BAD_CURSOR);
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    parsed[0] !== HISTORY_CURSOR_VERSION ||
    typeof parsed[1] !== "string" ||
    !/^[1-9][0-9]{0,17}$/.test(parsed[1])
  ) {
    throw new BadRequestError(BAD_CURSOR);
  }
  return { limit, beforeId: parsed[1] };
}
