// What an attempt's result means for its delivery, and whose failure it is: the one place the webhooks service
// decides it. Pure: the repository writes the decision. Only the receiver's answer (or the receiver's network)
// spends an attempt of the delivery's schedule; our PostgreSQL being down, or our configuration failing us (a
// signing secret we cannot decrypt), never does: the worker waits, and the delivery is sent once it can be
// (service-kit outage-wait.ts). Nothing is dead-lettered for it either.
import { isDependencyUnavailable } from "@pss/service-kit";
import type { SendResult } from "./sender.ts";
import { nextRetryDelayMs } from "./retry-schedule.ts";

export type Decision =
  | { status: "delivered" }
  /** Try again after delayMs (the schedule's next delay with jitter, or later if the receiver asked). */
  | { status: "pending"; delayMs: number }
  /** No further attempt: the schedule is used up, or the receiver answered 410 and the endpoint is disabled. */
  | { status: "failed"; gone: boolean };

/** `attemptInRound`: 1 for the first attempt since the delivery was created, retried by hand or recovered. */
export function decide(
  result: Pick<SendResult, "statusCode" | "error" | "retryAfterMs">,
  attemptInRound: number,
  schedule: readonly number[],
  random: () => number = Math.random,
): Decision {
  if (result.error === null) return { status: "delivered" };
  // 410 Gone: the receiver says this endpoint no longer exists. Standard Webhooks: stop sending to it.
  if (result.statusCode === 410) return { status: "failed", gone: true };
  const delayMs = nextRetryDelayMs(schedule, attemptInRound, result.retryAfterMs, random);
  return delayMs === null ? { status: "failed", gone: false } : { status: "pending", delayMs };
}

/**
 * Deliveries by outcome (metrics): every attempt ends as exactly one of these. postponed: given back without
 * spending an attempt because of a failure of ours (nothing was sent).
 */
export type AttemptOutcome =
  | "delivered"
  | "retry_scheduled"
  | "failed"
  | "endpoint_gone"
  | "endpoint_disabled"
  | "discarded"
  | "postponed";

/** A failure on our side while handling a claimed delivery: which of ours, or null when it is not ours. */
export type OurFailure = "postgres" | "configuration" | null;

/** The signing secret could not be decrypted with WEBHOOK_SECRET_KEY: a configuration problem of ours. */
export class SecretUnreadable extends Error {
  constructor(cause: unknown) {
    super("the signing secret could not be read (a configuration problem on our side)", { cause });
    this.name = "SecretUnreadable";
  }
}

export function ourFailure(err: unknown): OurFailure {
  if (err instanceof SecretUnreadable) return "configuration";
  if (isDependencyUnavailable(err)) return "postgres";
  return null;
}

/** Whether a failed PostgreSQL statement failed because the server is unreachable (wait for it). */
export const isDatabaseOutage = (err: unknown): boolean => ourFailure(err) === "postgres";
