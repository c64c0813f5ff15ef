// What every call of the client shares: the success body or a thrown PssApiError, the per-call headers, dates as
// ISO strings, and paging through nextCursor.
import { PssApiError } from "./errors.ts";

export interface CallOptions {
  signal?: AbortSignal;
  /** Sent as X-Request-Id (letters, digits and ._:- up to 64): the API logs it and answers with it. */
  requestId?: string;
}

export type Answer = { data?: unknown; error?: unknown; response: Response };

/** The success body, or a PssApiError built from the error answer. */
export function unwrap<T>(answer: Answer): T & { requestId: string | null; httpStatus: number } {
  const { response } = answer;
  if (!response.ok) throw PssApiError.from(response, answer.error);
  const requestId = response.headers.get("x-request-id");
  return Object.assign({}, answer.data as T, { requestId, httpStatus: response.status });
}

export const iso = (v: string | Date | undefined) => (v instanceof Date ? v.toISOString() : v);
export const headersOf = (o: CallOptions | undefined) => (o?.requestId ? { "x-request-id": o.requestId } : undefined);
export const limitOf = (limit: number | undefined) => (limit === undefined ? undefined : String(limit));

/**
 * Every item, page after page, following nextCursor until it is null. An empty page with a cursor means "nothing
 * committed past here yet" (the API's commit-safe paging): wait a moment and follow it.
 */
export async function* pages<T>(
  fetchPage: (cursor: string | undefined) => Promise<Answer>,
  signal?: AbortSignal,
): AsyncGenerator<T> {
  let cursor: string | undefined;
  for (;;) {
    const page = unwrap<{ results: T[]; nextCursor: string | null }>(await fetchPage(cursor));
    yield* page.results;
    if (page.nextCursor === null) return;
    if (page.results.length === 0) await new Promise((r) => setTimeout(r, 250));
    if (signal?.aborted) throw signal.reason;
    cursor = page.nextCursor;
  }
}
