// Opaque cursors over (updated_at, id): a stable order in which every record appears once per pass.
import { isDateTime } from "@pss/contracts";
import { BadRequestError } from "./errors.ts";

export interface PageRequest {
  limit: number;
  after: { updatedAt: Date; id: string } | null;
  updatedSince: Date | null;
}

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 500;

export function encodeCursor(updatedAt: Date, id: string | number): string {
  return Buffer.from(JSON.stringify([updatedAt.toISOString(), String(id)])).toString("base64url");
}

/** A full page may have more after it; a short one is the end. */
export function nextCursor(rows: { updatedAt: Date; id: string | number }[], limit: number): string | null {
  const last = rows.at(-1);
  return rows.length === limit && last ? encodeCursor(last.updatedAt, last.id) : null;
}

export function parsePageQuery(query: Record<string, string | undefined>): PageRequest {
  const unknown = Object.keys(query).filter((k) => !["limit", "cursor", "updatedSince"].includes(k));
  if (unknown.length) throw new BadRequestError(`Unknown query parameter ${unknown[0]}; allowed: limit, cursor, updatedSince`);
  let limit = DEFAULT_PAGE_SIZE;
  if (query.limit !== undefined) {
    limit = Number(query.limit);
    if (!/^\d+$/.test(query.limit) || limit < 1 || limit > MAX_PAGE_SIZE) throw new BadRequestError(`limit must be an integer from 1 to ${MAX_PAGE_SIZE}`);
  }
  let updatedSince: Date | null = null;
  if (query.updatedSince !== undefined) {
    if (!isDateTime(query.updatedSince) || new Date(query.updatedSince).getUTCFullYear() < 1) throw new BadRequestError("updatedSince must be an ISO 8601 date-time with a time zone, e.g. 2024-05-01T00:00:00Z");
    updatedSince = new Date(query.updatedSince);
  }
  let after: PageRequest["after"] = null;
  if (query.cursor !== undefined) {
    try {
      const [at, id] = JSON.parse(Buffer.from(query.cursor, "base64url").toString()) as [string, string];
      if (!/^\d{1,18}$/.test(id) || !(new Date(at).getUTCFullYear() >= 1)) throw new Error();
      after = { updatedAt: new Date(at), id };
    } catch {
      throw new BadRequestError("cursor is not valid; pass nextCursor from the previous page unchanged");
    }
  }
  return { limit, after, updatedSince };
}
