// Retries with exponential backoff and full jitter. Safe for the partner API because every write is an
// idempotent PUT keyed by the partner's own ID: sending one twice stores it once.
import { PssNetworkError, parseRetryAfter } from "./errors.ts";

export type FetchLike = (request: Request) => Promise<Response>;

export interface RetryOptions {
  /** Attempts in all, the first included (default 6). 1 turns retrying off. */
  maxAttempts?: number;
  /** Backoff base: attempt n waits a random time in [0, min(maxDelayMs, baseDelayMs * 2^(n-1))) (default 250). */
  baseDelayMs?: number;
  /** Cap of one backoff wait (default 20 000). */
  maxDelayMs?: number;
  /** A Retry-After longer than this is not waited for: the answer is returned as it is (default 120 000). */
  maxRetryAfterMs?: number;
  /** Time limit of one attempt until the answer's headers; a timed-out attempt counts as a network error (default 30 000). */
  attemptTimeoutMs?: number;
  /** Told before every wait: the CLI uses it to pause all its workers on a 429. */
  onRetry?: (info: RetryInfo) => void;
  /** For tests: the random source (default Math.random) and the wait. */
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface RetryInfo {
  /** The attempt that failed (1 = the first). */
  attempt: number;
  delayMs: number;
  method: string;
  url: string;
  /** The HTTP status that caused the retry, or null for a network error. */
  status: number | null;
  /** What the API asked for (429/503 with Retry-After), in ms. */
  retryAfterMs: number | null;
  error?: unknown;
}

/** Methods whose repeat has no extra effect (RFC 9110): retried on every retryable failure. */
const IDEMPOTENT = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);
/** The batch upserts are POSTs made of PUTs: each item is idempotent, so the whole request is. */
const IDEMPOTENT_POST = /\/partner\/v1\/(listings|brokers)\/batch(\?|$)/;

/** Statuses worth another attempt: request timeout, rate limited, and server-side failures except "not implemented". */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status !== 501 && status !== 505);
}

/** Full jitter (AWS architecture blog, "Exponential Backoff and Jitter"): uniform in [0, min(cap, base * 2^(attempt-1))). */
export function backoffDelay(
  attempt: number,
  opts: { baseDelayMs: number; maxDelayMs: number },
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(random() * ceiling);
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export function createRetryingFetch(inner: FetchLike, options: RetryOptions = {}): FetchLike {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 6);
  const delays = { baseDelayMs: options.baseDelayMs ?? 250, maxDelayMs: options.maxDelayMs ?? 20_000 };
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 120_000;
  const attemptTimeoutMs = options.attemptTimeoutMs ?? 30_000;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? abortableSleep;

  return async (request) => {
    const method = request.method.toUpperCase();
    const idempotent = IDEMPOTENT.has(method) || (method === "POST" && IDEMPOTENT_POST.test(request.url));
    // Read once: every attempt sends these same bytes in a request of its own.
    const body = request.body ? await request.arrayBuffer() : null;
    for (let attempt = 1; ; attempt++) {
      if (request.signal.aborted) throw request.signal.reason;
      const last = attempt >= maxAttempts;
      // One attempt's time limit, and the caller's abort, end this attempt.
      const controller = new AbortController();
      const timer = setTimeout(
        () => controller.abort(new Error(`no answer within ${attemptTimeoutMs} ms`)),
        attemptTimeoutMs,
      );
      const forwardAbort = () => controller.abort(request.signal.reason);
      request.signal.addEventListener("abort", forwardAbort, { once: true });
      let response: Response;
      try {
        response = await inner(
          new Request(request.url, {
            method,
            headers: request.headers,
            body,
            signal: controller.signal,
            redirect: request.redirect,
          }),
        );
      } catch (error) {
        // The caller's own abort ends everything at once.
        if (request.signal.aborted) throw request.signal.reason;
        const reason = controller.signal.aborted
          ? `no answer within ${attemptTimeoutMs} ms`
          : describeNetworkError(error);
        if (last || !idempotent)
          throw new PssNetworkError(
            `${method} ${request.url}: ${reason}${attempt > 1 ? ` (after ${attempt} attempts)` : ""}`,
            { cause: error },
          );
        const delayMs = backoffDelay(attempt, delays, random);
        options.onRetry?.({ attempt, delayMs, method, url: request.url, status: null, retryAfterMs: null, error });
        await sleep(delayMs, request.signal);
        continue;
      } finally {
        clearTimeout(timer);
        request.signal.removeEventListener("abort", forwardAbort);
      }
      // Only a 429 is known not to have been processed, so only it is retried for other methods (POST).
      const retryable = isRetryableStatus(response.status) && (idempotent || response.status === 429);
      if (!retryable || last) return response;
      const retryAfterSeconds = parseRetryAfter(response.headers.get("retry-after"));
      const retryAfterMs = retryAfterSeconds === null ? null : retryAfterSeconds * 1000;
      if (retryAfterMs !== null && retryAfterMs > maxRetryAfterMs) return response;
      const delayMs = Math.max(retryAfterMs ?? 0, backoffDelay(attempt, delays, random));
      await response.body?.cancel().catch(() => {});
      options.onRetry?.({ attempt, delayMs, method, url: request.url, status: response.status, retryAfterMs });
      await sleep(delayMs, request.signal);
    }
  };
}

function describeNetworkError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code ?? (error.cause as { code?: unknown } | undefined)?.code;
    return typeof code === "string" && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
  }
  return String(error);
}
