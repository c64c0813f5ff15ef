// Deadlocks and serialization failures are not errors of the request: PostgreSQL rolled the transaction back
// and a new attempt normally succeeds. Nor is a row lock a NOWAIT could not take (a writer that must not wait while
// holding other locks, webhooks/webhook-resend.ts, tries again). Every write path runs its transaction through
// retryTransaction.
import { inChildSpan, POSTGRES_SPAN } from "@pss/service-kit";
import { ApiError } from "../http/errors.ts";

/** 40P01 deadlock_detected, 40001 serialization_failure, 55P03 lock_not_available (FOR UPDATE NOWAIT). */
const RETRYABLE_SQLSTATES = new Set(["40P01", "40001", "55P03"]);

export function isRetryableConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && RETRYABLE_SQLSTATES.has(code);
}

/** A write that kept colliding with concurrent writes: retry shortly (503 with Retry-After, never a 500). */
export class ContendedWriteError extends ApiError {
  constructor() {
    super(
      503,
      "The record is being changed by other requests right now and the change could not be applied; it was not stored, please retry shortly",
      undefined,
      { "Retry-After": "1" },
    );
  }
}

export interface RetryOptions {
  /** Attempts in all, the first included. */
  attempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  onRetry?: (info: { attempt: number; code: string; delayMs: number }) => void;
}

/**
 * Runs `work` (a whole transaction, or a single-statement write) again after a deadlock or serialization
 * failure, with full-jitter exponential backoff so colliding requests do not collide again in step. After the
 * last attempt the conflict becomes a ContendedWriteError. Anything else is rethrown at once.
 */
export async function retryTransaction<T>(work: () => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  const attempts = opts.attempts ?? 6;
  const base = opts.baseDelayMs ?? 10;
  const max = opts.maxDelayMs ?? 400;
  const sleep = opts.sleep ?? ((ms: number) => Bun.sleep(ms));
  const random = opts.random ?? Math.random;
  for (let attempt = 1; ; attempt++) {
    try {
      // Each attempt is a span of the request's trace: the statements below are its children.
      return await inChildSpan(
        "transaction",
        async (span) => {
          span?.setAttribute("pss.attempt", attempt);
          return work();
        },
        { attributes: POSTGRES_SPAN },
      );
    } catch (err) {
      if (!isRetryableConflict(err)) throw err;
      if (attempt >= attempts) throw new ContendedWriteError();
      const delayMs = Math.round(random() * Math.min(max, base * 2 ** attempt));
      opts.onRetry?.({ attempt, code: (err as { code: string }).code, delayMs });
      await sleep(delayMs);
    }
  }
}
