// Sends due deliveries, up to `concurrency` at once: claims them, signs and POSTs each, records the outcome.
// New deliveries are sent at once (the fan-out wakes the loop); retries when their time comes (polled).
import type { Logger, SecretBox } from "@pss/service-kit";
import { createInterruptibleSleep } from "@pss/service-kit";
import type { AttemptOutcome } from "./outcome.ts";
import { decide } from "./outcome.ts";
import type { ClaimedDelivery, DeliveryRepository, PartnerScope } from "./delivery-repository.ts";
import type { Sender } from "./sender.ts";
import { signedHeaders } from "./signing.ts";

export interface DeliveryWorkerDeps {
  repository: DeliveryRepository;
  sender: Sender;
  secrets: SecretBox;
  logger: Logger;
  concurrency: number;
  pollMs: number;
  /** How long a claim holds: the attempt's timeout plus a margin for recording it. */
  leaseMs: number;
  retryScheduleMs: readonly number[];
  partners: () => PartnerScope;
  /** Called once per finished attempt (metrics); seconds: the receiver's answer time, null when nothing was sent. */
  onOutcome?: (outcome: AttemptOutcome, seconds: number | null) => void;
}

export interface DeliveryWorker {
  start(): void;
  /** Stops claiming, lets the attempts in flight finish and be recorded. */
  stop(): Promise<void>;
  /** New deliveries are due now: look at once instead of at the next poll. */
  wake(): void;
  inFlight(): number;
}

export function createDeliveryWorker(deps: DeliveryWorkerDeps): DeliveryWorker {
  const log = deps.logger.child({ component: "delivery-worker" });
  const inflight = new Set<Promise<void>>();
  const pause = createInterruptibleSleep();
  let running = false;
  let loop: Promise<void> | null = null;
  let wakeRequested = false;

  async function attempt(claim: ClaimedDelivery): Promise<{ outcome: AttemptOutcome; seconds: number | null }> {
    const l = log.child({ deliveryId: claim.id, endpointId: claim.endpointId, attempt: claim.attempt });
    if (!claim.endpointEnabled) {
      await deps.repository.record(claim, null, { status: "endpoint-disabled" });
      return { outcome: "endpoint_disabled", seconds: null };
    }
    let secrets: string[];
    try {
      secrets = [deps.secrets.decrypt(claim.secretEncrypted), ...(claim.previousSecretEncrypted ? [deps.secrets.decrypt(claim.previousSecretEncrypted)] : [])];
    } catch (err) {
      // A configuration problem (WEBHOOK_SECRET_KEY differs from the API's), not the receiver's: retried on the schedule.
      l.error("signing secret cannot be decrypted; check WEBHOOK_SECRET_KEY", { err: (err as Error).message });
      const error = "the signing secret could not be read (a configuration problem on our side)";
      const decision = decide({ statusCode: null, error, retryAfterMs: null }, claim.attemptInRound, deps.retryScheduleMs);
      await deps.repository.record(claim, { at: new Date(), statusCode: null, latencyMs: 0, error }, decision.status === "failed" ? { status: "failed" } : decision);
      return { outcome: decision.status === "pending" ? "retry_scheduled" : "failed", seconds: null };
    }
    const at = new Date();
    const headers = signedHeaders(secrets, claim.id, Math.floor(at.getTime() / 1000), claim.payload);
    const result = await deps.sender.send({ url: claim.url, headers: { ...headers }, body: claim.payload });
    const decision = decide(result, claim.attemptInRound, deps.retryScheduleMs);
    const recorded = await deps.repository.record(
      claim,
      { at, statusCode: result.statusCode, latencyMs: result.latencyMs, error: result.error },
      decision.status === "failed" && decision.gone ? { status: "failed", disable: { cause: "gone", reason: `the receiver answered 410 Gone at ${at.toISOString()}` } } : decision,
    );
    const outcome: AttemptOutcome = !recorded.applied
      ? "discarded"
      : recorded.disabled === "gone"
        ? "endpoint_gone"
        : recorded.disabled === "failing"
          ? "endpoint_disabled"
          : decision.status === "delivered"
            ? "delivered"
            : decision.status === "pending"
              ? "retry_scheduled"
              : "failed";
    if (outcome === "delivered") l.debug("delivered", { statusCode: result.statusCode, latencyMs: result.latencyMs });
    else if (outcome === "retry_scheduled") l.info("delivery attempt failed; will retry", { error: result.error, retryInMs: decision.status === "pending" ? decision.delayMs : undefined });
    else if (outcome === "endpoint_gone" || outcome === "endpoint_disabled") l.warn("endpoint disabled", { outcome, error: result.error });
    else if (outcome === "failed") l.warn("delivery failed for good", { error: result.error, attemptInRound: claim.attemptInRound });
    // Fencing: the claim ran out (or a manual retry came) and another attempt took the delivery over meanwhile.
    else if (outcome === "discarded") l.warn("delivery attempt outlived its claim; its outcome was not recorded", { statusCode: result.statusCode, error: result.error });
    return { outcome, seconds: result.latencyMs / 1000 };
  }

  function launch(claim: ClaimedDelivery) {
    const run = attempt(claim)
      .then(({ outcome, seconds }) => deps.onOutcome?.(outcome, seconds))
      .catch((err) => log.warn("recording a delivery attempt failed; its claim expires and it is sent again", { deliveryId: claim.id, err: (err as Error).message }))
      .finally(() => {
        inflight.delete(run);
        // A slot is free: more may be due.
        pause.wake();
      });
    inflight.add(run);
  }

  async function run() {
    while (running) {
      const free = deps.concurrency - inflight.size;
      let claimed: ClaimedDelivery[] = [];
      wakeRequested = false;
      if (free > 0) {
        try {
          claimed = await deps.repository.claimDue(free, deps.leaseMs, deps.partners());
        } catch (err) {
          log.warn("claiming due deliveries failed; retrying", { err: (err as Error).message });
        }
      }
      if (!running) {
        // Claimed while stopping: their leases expire and another worker sends them.
        break;
      }
      for (const claim of claimed) launch(claim);
      // All free slots filled: there may be more; otherwise wait for the poll, a wake-up or a free slot.
      if ((free > 0 && claimed.length === free) || wakeRequested) continue;
      await pause.sleep(deps.pollMs);
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    async stop() {
      running = false;
      pause.wake();
      await loop;
      await Promise.allSettled([...inflight]);
    },
    wake() {
      wakeRequested = true;
      pause.wake();
    },
    inFlight: () => inflight.size,
  };
}
