// Sends due deliveries, up to `concurrency` at once per audience (endpoints with lead data, the others: each its own
// slots and claim loop): claims them, signs and POSTs each, records the outcome.
// New deliveries are sent at once (the fan-out wakes the loop); retries when their time comes (polled).
// Our own failures (PostgreSQL down, a signing secret we cannot read) never spend a delivery's attempts
// (outcome.ts decides whose failure it is): writes wait for PostgreSQL, a delivery we cannot sign is postponed.
import type { Logger, OutageBackoff, OutageMetrics, SecretBox, TickContext, Tracing } from "@pss/service-kit";
import {
  SpanKind,
  SpanStatusCode,
  countOutageWaits,
  createPeriodicJob,
  createSleepGroup,
  OutageWaitAbandoned,
  outageDelayMs,
  waitOutOutage,
} from "@pss/service-kit";
import type { AttemptOutcome } from "./outcome.ts";
import { decide, isDatabaseOutage, SecretUnreadable } from "./outcome.ts";
import {
  AUDIENCES,
  type Audience,
  type ClaimedDelivery,
  type DeliveryRepository,
  type PartnerScope,
} from "./delivery-repository.ts";
import type { Sender } from "./sender.ts";
import { signedHeaders } from "./signing.ts";

export interface DeliveryWorkerDeps {
  repository: DeliveryRepository;
  sender: Sender;
  secrets: SecretBox;
  logger: Logger;
  /** Attempts in flight at once in this instance, for each audience (delivery-repository.ts, Audience). */
  concurrency: number;
  pollMs: number;
  /** How long a claim holds: the attempt's timeout plus a margin for recording it. */
  leaseMs: number;
  retryScheduleMs: readonly number[];
  partners: () => PartnerScope;
  /** Called once per finished attempt (metrics); seconds: the receiver's answer time, null when nothing was sent. */
  onOutcome?: (outcome: AttemptOutcome, seconds: number | null) => void;
  /** Waits on PostgreSQL and postponements for our configuration (webhooks_dependency_waits_total). */
  outageMetrics?: OutageMetrics;
  /** Between tries of PostgreSQL, and how long an unsignable delivery waits: 1 s doubling to 30 s by default. */
  outageBackoff?: OutageBackoff;
  /** An attempt's span, a child of its delivery's fan-out (its traceparent); absent: nothing recorded. */
  tracing?: Tracing;
}

/** How often a worker removes the in-flight rows of attempts whose worker died (they no longer count anyway). */
const FORGET_EXPIRED_EVERY_MS = 60_000;

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
  /** Unreadable secrets in a row: how long the next delivery we cannot sign waits. */
  let configurationFailures = 0;
  // Every wait for PostgreSQL in flight ends at stop().
  const outageSleeps = createSleepGroup();
  /**
   * A write of ours waits through an outage of PostgreSQL: after a send, the outcome is recorded once instead of
   * the claim running out and the delivery being sent again with an attempt spent. A stop ends the wait (the
   * claim then runs out and the delivery is sent again with the same webhook-id, as after a crash).
   */
  // While an outcome waits for PostgreSQL, nothing new is claimed: when it is back, the waiting outcomes are
  // written before this worker could take their deliveries up again (a lease that ran out during the outage).
  const { metrics: outageMetrics, waiting: waitingForDatabase } = countOutageWaits("postgres", deps.outageMetrics);
  const untilRecorded = <T>(what: string, l: Logger, write: () => Promise<T>) =>
    waitOutOutage(write, {
      dependency: "postgres",
      what,
      isOutage: isDatabaseOutage,
      logger: l,
      metrics: outageMetrics,
      backoff: deps.outageBackoff,
      isStopping: () => !isRunning(),
      sleep: outageSleeps.sleep,
    });

  function readSecrets(claim: ClaimedDelivery): string[] {
    try {
      return [
        deps.secrets.decrypt(claim.secretEncrypted),
        ...(claim.previousSecretEncrypted ? [deps.secrets.decrypt(claim.previousSecretEncrypted)] : []),
      ];
    } catch (err) {
      throw new SecretUnreadable(err);
    }
  }

  async function attempt(claim: ClaimedDelivery): Promise<{ outcome: AttemptOutcome; seconds: number | null }> {
    const l = log.child({ deliveryId: claim.id, endpointId: claim.endpointId, attempt: claim.attempt });
    if (!claim.endpointEnabled) {
      await untilRecorded("recording a disabled endpoint's delivery", l, () =>
        deps.repository.record(claim, null, { status: "endpoint-disabled" }),
      );
      return { outcome: "endpoint_disabled", seconds: null };
    }
    let secrets: string[];
    try {
      secrets = readSecrets(claim);
      configurationFailures = 0;
    } catch (err) {
      // A configuration problem of ours (WEBHOOK_SECRET_KEY differs from the API's), not the receiver's: nothing is
      // sent, no attempt spent, the endpoint's health untouched; the delivery waits until the key is fixed.
      configurationFailures++;
      const delayMs = outageDelayMs(configurationFailures, deps.outageBackoff);
      deps.outageMetrics?.waited("configuration");
      l.error("signing secret cannot be decrypted; check WEBHOOK_SECRET_KEY (delivery postponed, no attempt spent)", {
        err: (err as Error).message,
        retryInMs: delayMs,
      });
      const postponed = await untilRecorded("postponing a delivery", l, () =>
        deps.repository.postpone(claim, (err as Error).message, delayMs),
      );
      return { outcome: postponed ? "postponed" : "discarded", seconds: null };
    }
    const at = new Date();
    const headers = signedHeaders(secrets, claim.id, Math.floor(at.getTime() / 1000), claim.payload);
    const result = await deps.sender.send({ url: claim.url, headers: { ...headers }, body: claim.payload });
    const decision = decide(result, claim.attemptInRound, deps.retryScheduleMs);
    const recorded = await untilRecorded("recording a delivery attempt", l, () =>
      deps.repository.record(
        claim,
        {
          at,
          statusCode: result.statusCode,
          latencyMs: result.latencyMs,
          error: result.error,
          responseExcerpt: result.responseExcerpt,
        },
        decision.status === "failed" && decision.gone
          ? {
              status: "failed",
              disable: { cause: "gone", reason: `the receiver answered 410 Gone at ${at.toISOString()}` },
            }
          : decision,
      ),
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
    else if (outcome === "retry_scheduled")
      l.info("delivery attempt failed; will retry", {
        error: result.error,
        retryInMs: decision.status === "pending" ? decision.delayMs : undefined,
      });
    else if (outcome === "endpoint_gone" || outcome === "endpoint_disabled")
      l.warn("endpoint disabled", { outcome, error: result.error });
    else if (outcome === "failed")
      l.warn("delivery failed for good", { error: result.error, attemptInRound: claim.attemptInRound });
    // Fencing: the claim ran out (or a manual retry came) and another attempt took the delivery over meanwhile.
    else if (outcome === "discarded")
      l.warn("delivery attempt outlived its claim; its outcome was not recorded", {
        statusCode: result.statusCode,
        error: result.error,
      });
    return { outcome, seconds: result.latencyMs / 1000 };
  }

  /** The attempt in its span when the delivery came with a trace (a fact's fan-out), else as it is. */
  function tracedAttempt(claim: ClaimedDelivery): ReturnType<typeof attempt> {
    if (!deps.tracing || !claim.traceparent) return attempt(claim);
    return deps.tracing.inSpan(
      "webhook delivery",
      {
        kind: SpanKind.CLIENT,
        parent: claim.traceparent,
        attributes: {
          "pss.delivery_id": claim.id,
          "pss.endpoint_id": claim.endpointId,
          "pss.partner_id": claim.partnerId,
          "pss.attempt": claim.attempt,
        },
      },
      async (span) => {
        const result = await attempt(claim);
        span.setAttribute("pss.outcome", result.outcome);
        if (result.outcome !== "delivered" && result.outcome !== "postponed")
          span.setStatus({ code: SpanStatusCode.ERROR, message: result.outcome });
        return result;
      },
    );
  }

  /**
   * One audience's slots and claim loop (delivery-repository.ts, Audience): endpoints with lead data and the others
   * each have `concurrency` slots of their own, so an attempt of one audience never waits for a slot the other holds.
   */
  function createLane(audience: Audience) {
    const inflight = new Set<Promise<void>>();

    function launch(claim: ClaimedDelivery) {
      const run = tracedAttempt(claim)
        .then(({ outcome, seconds }) => deps.onOutcome?.(outcome, seconds))
        .catch((err) =>
          log.warn(
            err instanceof OutageWaitAbandoned
              ? "stopping while PostgreSQL is down; the claim expires and the delivery is sent again"
              : "recording a delivery attempt failed; its claim expires and it is sent again",
            {
              deliveryId: claim.id,
              err: (err as Error).message,
            },
          ),
        )
        .finally(() => {
          inflight.delete(run);
          // A slot is free: more may be due.
          job.wake();
        });
      inflight.add(run);
    }

    /** Claims as many due deliveries as there are free slots; true when all were filled (more may be due). */
    async function claimRound(ctx: TickContext): Promise<boolean> {
      const free = deps.concurrency - inflight.size;
      if (free <= 0 || waitingForDatabase() > 0) return false;
      if (audience === "records" && Date.now() - lastForgotten > FORGET_EXPIRED_EVERY_MS) {
        lastForgotten = Date.now();
        await deps.repository.forgetExpiredAttempts();
      }
      const claimed = await deps.repository.claimDue(free, deps.leaseMs, deps.partners(), audience);
      // Claimed while stopping: their leases expire and another worker sends them.
      if (ctx.isStopping()) return false;
      for (const claim of claimed) launch(claim);
      return claimed.length === free;
    }

    // Waits for the poll, a wake-up (new deliveries, a free slot) or, after a full round, goes on at once.
    const job = createPeriodicJob({
      name: `delivery worker (${audience})`,
      logger: log,
      intervalMs: deps.pollMs,
      failureMessage: "claiming due deliveries failed; retrying",
      tick: claimRound,
    });
    return { job, inflight };
  }

  let lastForgotten = 0;
  const lanes = AUDIENCES.map(createLane);
  const isRunning = () => lanes.some((l) => l.job.isRunning());

  return {
    start: () => {
      for (const lane of lanes) lane.job.start();
    },
    async stop() {
      const stopped = Promise.all(lanes.map((l) => l.job.stop()));
      outageSleeps.wakeAll();
      await stopped;
      await Promise.allSettled(lanes.flatMap((l) => [...l.inflight]));
    },
    wake: () => {
      for (const lane of lanes) lane.job.wake();
    },
    inFlight: () => lanes.reduce((n, l) => n + l.inflight.size, 0),
  };
}
