// What the two batch routes share: the envelope's own rules (a malformed batch is refused whole, before anything
// is read or written), the single PUT's checks applied to one item, and the per-item answer. Every item's answer
// is built here or by the single PUT's own answer builder, so an item answers exactly what its PUT would.
import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { Logger } from "@pss/service-kit";
import {
  mapError,
  ApiError,
  BadRequestError,
  RateLimitedError,
  validationError,
  textRuleError,
  describeValidationErrors,
} from "@pss/http-kit";

/** One item's answer: the status and body its single PUT would have given. */
export interface ItemAnswer<B = unknown> {
  httpStatus: number;
  /** false for an identical repeat, a dry run and an error: nothing was written or announced. */
  changed: boolean;
  body: B;
}

/** Where an item stands: refused already, or valid and waiting for its write. */
/** An item's outcome: the single write's result, or the error it would have thrown. */
export type ItemOutcome<T> = { ok: T } | { error: unknown };

export type ItemState<T> = { refused: ApiError } | { valid: T };

/** A batch naming the same external ID twice is refused whole: which body should win is anyone's guess. */
export function refuseDuplicateIds(ids: string[], idName: string): void {
  const first = new Map<string, number>();
  const details: { path: string; message: string }[] = [];
  ids.forEach((id, i) => {
    const seen = first.get(id);
    if (seen === undefined) first.set(id, i);
    else
      details.push({
        path: `items[${i}].${idName}`,
        message: `repeats items[${seen}].${idName} (${JSON.stringify(id).slice(0, 140)}); each ${idName} may appear once per batch`,
      });
  });
  if (details.length) throw validationError(details);
}

/** Errors the route framework would list for a body (it stops at 64 too). */
const MAX_ERRORS = 64;

/**
 * The single PUT's body checks in its order: the edge's text rules, then the route's schema (the same compiled
 * TypeBox schema, described by the same messages). Returns the 400 the PUT would answer, or null.
 */
export function createBodyCheck(schema: TSchema): (body: unknown) => ApiError | null {
  const compiled = TypeCompiler.Compile(schema);
  return (body) => {
    const text = textRuleError(body);
    if (text) return text;
    if (compiled.Check(body)) return null;
    const errors = [];
    for (const e of compiled.Errors(body)) {
      errors.push(e);
      if (errors.length >= MAX_ERRORS) break;
    }
    const details = describeValidationErrors(errors);
    return details.length ? validationError(details) : new BadRequestError("Request is not valid");
  };
}

/** Runs a check that throws the PUT's typed error (an ID rule, a body rule) and keeps the error instead. */
export function refusal(check: () => void): ApiError | null {
  try {
    check();
    return null;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
}

/** The single PUT's error answer for a failure of one item (through the one error mapper). */
export function errorAnswer(error: unknown, logger: Logger, requestId: string): ItemAnswer {
  const mapped = mapError({ code: "UNKNOWN", error, requestId, logger });
  return { httpStatus: mapped.status, changed: false, body: mapped.body };
}

/** The answer of an item the rate limit did not let through: the single PUT's 429. */
export const rateLimitedError = (retryAfter: number) => new RateLimitedError(retryAfter);

/** Items answered by outcome, for the batch's summary. */
export function countAnswers(answers: ItemAnswer[], dryRun: boolean) {
  const counts = { created: 0, updated: 0, unchanged: 0, failed: 0 };
  for (const a of answers) {
    if (a.httpStatus >= 300) counts.failed++;
    else if (dryRun) {
      const outcome = (a.body as { outcome?: string }).outcome;
      if (outcome === "wouldCreate") counts.created++;
      else if (outcome === "wouldUpdate") counts.updated++;
      else counts.unchanged++;
    } else if (a.httpStatus === 201) counts.created++;
    else if (a.changed) counts.updated++;
    else counts.unchanged++;
  }
  return counts;
}

/** Runs `work` over `items` with at most `limit` in flight, results in item order. */
export async function mapBounded<T, R>(
  items: T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
