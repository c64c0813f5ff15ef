// What an attempt's result means for its delivery. Pure: the repository writes the decision.
import type { SendResult } from "./sender.ts";
import { nextRetryDelayMs } from "./retry-schedule.ts";

export type Decision =
  | { status: "delivered" }
  /** Try again after delayMs (the schedule's next delay with jitter, or later if the receiver asked). */
  | { status: "pending"; delayMs: number }
  /** No further attempt: the schedule is used up, or the receiver answered 410 and the endpoint is disabled. */
  | { status: "failed"; gone: boolean };

/** `attemptInRound`: 1 for the first attempt since the delivery was created, retried by hand or recovered. */
export function decide(result: Pick<SendResult, "statusCode" | "error" | "retryAfterMs">, attemptInRound: number, schedule: readonly number[], random: () => number = Math.random): Decision {
  if (result.error === null) return { status: "delivered" };
  // 410 Gone: the receiver says this endpoint no longer exists. Standard Webhooks: stop sending to it.
  if (result.statusCode === 410) return { status: "failed", gone: true };
  const delayMs = nextRetryDelayMs(schedule, attemptInRound, result.retryAfterMs, random);
  return delayMs === null ? { status: "failed", gone: false } : { status: "pending", delayMs };
}

/** Deliveries by outcome (metrics): every attempt ends as exactly one of these. */
export type AttemptOutcome = "delivered" | "retry_scheduled" | "failed" | "endpoint_gone" | "endpoint_disabled" | "discarded";
