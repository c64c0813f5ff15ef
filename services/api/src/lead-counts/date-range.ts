// startDate / endDate of the lead-count endpoints: ISO 8601 with a time zone; start inclusive, end exclusive.
import { isDateTime } from "@pss/contracts";
import { BadRequestError } from "@pss/http-kit";
import { EARLIEST_RECORD_MS, parseInstant } from "../http/instants.ts";

export interface DateRange {
  /** null: from the beginning. */
  start: Date | null;
  /** null: now, at the moment of counting. */
  end: Date | null;
}

export const DATE_RULE =
  "dates must be ISO 8601 date-times with a time zone (Z or an offset), e.g. 2024-05-01T00:00:00Z";
const ALLOWED = ["startDate", "endDate"];

function invalid(detail: string): BadRequestError {
  return new BadRequestError(`Invalid query parameters: ${DATE_RULE}; ${detail}`);
}

const shown = (value: string) => (value.length > 64 ? `${value.slice(0, 64)}…` : value);

function instant(query: Record<string, unknown>, name: string): number | null {
  const value = query[name];
  if (value === undefined) return null;
  if (typeof value !== "string") throw invalid(`${name} is given more than once`);
  if (!isDateTime(value)) throw invalid(`${name} is not (got '${shown(value)}')`);
  return parseInstant(value);
}

export function parseDateRange(query: Record<string, unknown>): DateRange {
  const unknown = Object.keys(query).filter((k) => !ALLOWED.includes(k));
  if (unknown.length)
    throw new BadRequestError(
      `Invalid query parameters: unknown parameter '${shown(unknown[0]!)}'; allowed: startDate, endDate (${DATE_RULE})`,
    );
  const start = instant(query, "startDate");
  const end = instant(query, "endDate");
  // A rule across two parameters (no schema carries it): stated in the operations' descriptions, and named in details.
  if (start !== null && end !== null && start > end) {
    const problem = `startDate (${query.startDate}) is after endDate (${query.endDate})`;
    throw new BadRequestError(`Invalid query parameters: ${DATE_RULE}; ${problem}`, [
      { path: "startDate", message: `must not be after endDate; ${problem}` },
    ]);
  }
  // No lead predates the service: earlier bounds are clamped, which keeps every value inside PostgreSQL's range.
  return {
    start: start === null || start <= EARLIEST_RECORD_MS ? null : new Date(start),
    end: end === null ? null : new Date(Math.max(end, EARLIEST_RECORD_MS)),
  };
}
