// SQL of the delivery worker. A delivery is claimed by moving its next_attempt_at past the attempt's longest
// possible duration (a lease) and counting the attempt; a worker that dies mid-attempt leaves the lease to
// expire and another worker sends the same delivery again (same webhook-id). Every claim takes a new fencing
// token (claim_token + 1, migration 0019) and every outcome is written only while the delivery still carries it:
// a late writer whose claim was taken over changes nothing, neither the delivery, nor its attempt history, nor
// its endpoint's health (a late 410 or failure cannot disable an endpoint another worker just delivered to).
// The API's retry, recover and replay take a new token too when they make a delivery due again, so an attempt in
// flight then cannot record its outcome over the partner's "queued" answer.
// What holds a worker is kept apart from the delivery's state (webhook_attempts_in_flight, migration 0034): the claim
// writes a row per attempt and the attempt's end removes it, whatever the API did to the delivery meanwhile (retry,
// recover, replay, a disable or a deletion). The caps count those rows, and a delivery with one is not claimed
// again, so a retry of a delivery in flight waits for that attempt instead of adding a second one beside it.
import type postgres from "postgres";

type Sql = postgres.Sql;

/** Confine the worker to some partners' deliveries (tests share the database); null = all. */
export type PartnerScope = readonly string[] | null;

export interface ClaimedDelivery {
  id: string;
  endpointId: string;
  partnerId: string;
  payload: string;
  /** This attempt's number, counting every attempt the delivery ever had. */
  attempt: number;
  /** 1 for the first attempt of the current round (since creation, a manual retry or a recover). */
  attemptInRound: number;
  /** This claim's fencing token. */
  claimToken: number;
  url: string;
  endpointEnabled: boolean;
  secretEncrypted: string;
  /** Only while the rotation's overlap lasts. */
  previousSecretEncrypted: string | null;
  /** The fan-out's span (migration 0047): each attempt's span is its child. Null: made without a trace. */
  traceparent: string | null;
}

export interface AttemptRecord {
  at: Date;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  /** The first bytes of the receiver's answer (sender.ts); null when none came. */
  responseExcerpt?: string | null;
}

export type RecordedDecision =
  | { status: "delivered" }
  | { status: "pending"; delayMs: number }
  | { status: "failed"; disable?: { cause: "gone"; reason: string } }
  /** The endpoint was disabled meanwhile: nothing was sent. */
  | { status: "endpoint-disabled" };

export interface RecordResult {
  /** false: the claim was taken over (lease expired, manual retry) and this outcome was not applied. */
  applied: boolean;
  /** The endpoint was disabled by this outcome: 'gone' (410) or 'failing' (every attempt failed for too long). */
  disabled: "gone" | "failing" | null;
}

/** Only these partners' rows of the table aliased `alias` (tests share the database). */
const scoped = (sql: Sql, partners: PartnerScope, alias: string) =>
  partners ? sql`AND ${sql.unsafe(alias)}.partner_id = ANY(${partners as string[]}::uuid[])` : sql``;
const millis = (sql: Sql | postgres.TransactionSql, ms: number) => sql`(${ms}::bigint * interval '1 millisecond')`;
/** The claim's attempt ended: it no longer counts toward the caps (migration 0034). */
const attemptEnded = (sql: Sql | postgres.TransactionSql, claim: ClaimedDelivery) =>
  sql`DELETE FROM webhook_attempts_in_flight WHERE delivery_id = ${claim.id}::uuid AND claim_token = ${claim.claimToken}`;

/**
 * Whose deliveries a claim takes: endpoints without lead data ("records") or with it ("leads"). Each audience has
 * its own caps per partner and its own worker slots, so an attempt to a lead endpoint never takes capacity an
 * attempt a key without lead tracking can observe would need (docs/webhooks.md "Fair delivery").
 */
export type Audience = "records" | "leads";
export const AUDIENCES: readonly Audience[] = ["records", "leads"];

/** Attempts in flight at once, across instances, per endpoint and per partner (WEBHOOK_ENDPOINT_CONCURRENCY, WEBHOOK_PARTNER_CONCURRENCY). */
export const DEFAULT_FAIR_SHARE = { endpointConcurrency: 4, partnerConcurrency: 8 } as const;

export interface DeliveryRepositoryOptions {
  disableAfterMs: number;
  endpointConcurrency?: number;
  partnerConcurrency?: number;
}

export function createDeliveryRepository(sql: Sql, options: DeliveryRepositoryOptions) {
  const opts = {
    disableAfterMs: options.disableAfterMs,
    endpointConcurrency: options.endpointConcurrency ?? DEFAULT_FAIR_SHARE.endpointConcurrency,
    partnerConcurrency: options.partnerConcurrency ?? DEFAULT_FAIR_SHARE.partnerConcurrency,
  };
  /** Disables the endpoint (if still enabled) and fails its pending deliveries; recover sends them later. */
  async function disable(
    tx: postgres.TransactionSql,
    endpointId: string,
    cause: "gone" | "failing",
    reason: string,
  ): Promise<boolean> {
    const [row] = await tx`
      UPDATE webhook_endpoints SET enabled = false, disabled_cause = ${cause}, disabled_reason = ${reason}, disabled_at = now(),
        version = version + 1, updated_at = now()
      WHERE id = ${endpointId}::bigint AND enabled RETURNING id`;
    if (!row) return false;
    await tx`
      UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, last_error = ${`endpoint disabled: ${reason}`}
      WHERE endpoint_id = ${endpointId}::bigint AND status = 'pending'`;
    return true;
  }

  return {
    /**
     * Due deliveries nobody holds, each claimed for `leaseMs`, shared fairly (docs/webhooks.md "Fair delivery"):
     * an endpoint has at most `endpointConcurrency` attempts in flight and a partner `partnerConcurrency` (across
     * every instance), so a slow receiver holds back only its own deliveries; and the slots go round: every
     * endpoint's oldest due delivery before any endpoint's second, the least recently served partner and endpoint
     * first. Each endpoint is read through its own index range (oldest due first), never the whole queue.
     */
    async claimDue(
      limit: number,
      leaseMs: number,
      partners: PartnerScope,
      audience: Audience = "records",
    ): Promise<ClaimedDelivery[]> {
      if (limit <= 0) return [];
      const leads = audience === "leads";
      const rows = await sql`
        WITH flight AS (
          SELECT f.endpoint_id, f.partner_id, f.lead_data, count(*)::int AS n FROM webhook_attempts_in_flight f
          WHERE f.held_until > now() ${scoped(sql, partners, "f")}
          GROUP BY f.endpoint_id, f.partner_id, f.lead_data
        ), endpoint_flight AS (
          -- Every attempt to the endpoint, also one claimed before it began to carry lead data.
          SELECT endpoint_id, sum(n)::int AS n FROM flight GROUP BY endpoint_id
        ), partner_flight AS (
          -- The partner's attempts of this audience only: the other audience's never take its share.
          SELECT partner_id, sum(n)::int AS n FROM flight WHERE lead_data = ${leads} GROUP BY partner_id
        ), endpoints AS (
          SELECT e.id, e.partner_id, COALESCE(f.n, 0) AS busy, COALESCE(pf.n, 0) AS partner_busy,
                 t.served_at, max(t.served_at) OVER (PARTITION BY e.partner_id) AS partner_served_at
          FROM webhook_endpoints e
          LEFT JOIN endpoint_flight f ON f.endpoint_id = e.id
          LEFT JOIN partner_flight pf ON pf.partner_id = e.partner_id
          LEFT JOIN webhook_endpoint_turns t ON t.endpoint_id = e.id
          WHERE e.carries_lead_data = ${leads}
            ${scoped(sql, partners, "e")}
        ), candidates AS (
          SELECT c.id, x.partner_id, x.partner_busy, x.served_at, x.partner_served_at, c.turn, c.next_attempt_at
          FROM endpoints x CROSS JOIN LATERAL (
            -- The index's order alone (no tie-breaker): a backlog due at one instant is not sorted on each claim.
            -- A delivery whose attempt still holds a worker (a partner's retry made it due again) waits for it.
            SELECT d.id, d.next_attempt_at, row_number() OVER (ORDER BY d.next_attempt_at) AS turn
            FROM webhook_deliveries d
            WHERE d.endpoint_id = x.id AND d.status = 'pending' AND d.next_attempt_at <= now()
              AND NOT EXISTS (SELECT 1 FROM webhook_attempts_in_flight h WHERE h.delivery_id = d.id AND h.held_until > now())
            ORDER BY d.next_attempt_at
            LIMIT GREATEST(${opts.endpointConcurrency}::int - x.busy, 0)
          ) c
          WHERE x.busy < ${opts.endpointConcurrency}::int AND x.partner_busy < ${opts.partnerConcurrency}::int
        ), ranked AS (
          SELECT id, turn, served_at, partner_served_at, next_attempt_at,
                 partner_busy + row_number() OVER (PARTITION BY partner_id ORDER BY turn, served_at NULLS FIRST, next_attempt_at, id) AS partner_slot
          FROM candidates
        ), due AS (
          SELECT d.id FROM ranked r JOIN webhook_deliveries d ON d.id = r.id
          WHERE r.partner_slot <= ${opts.partnerConcurrency}::int AND d.status = 'pending' AND d.next_attempt_at <= now()
          ORDER BY r.turn, r.partner_served_at NULLS FIRST, r.served_at NULLS FIRST, r.next_attempt_at, r.id
          LIMIT ${limit} FOR UPDATE OF d SKIP LOCKED
        ), claimed AS (
          -- claimed_at: what the previous release counts as in flight (a rolling upgrade); this one reads the
          -- attempts table below.
          UPDATE webhook_deliveries d SET attempt_count = d.attempt_count + 1, claim_token = d.claim_token + 1,
            next_attempt_at = now() + ${millis(sql, leaseMs)}, claimed_at = now()
          FROM due WHERE d.id = due.id
          RETURNING d.id, d.endpoint_id, d.partner_id, d.payload, d.attempt_count, d.round_start, d.claim_token, d.traceparent
        ), held AS (
          INSERT INTO webhook_attempts_in_flight (delivery_id, claim_token, endpoint_id, partner_id, lead_data, held_until)
          SELECT id, claim_token, endpoint_id, partner_id, ${leads}, now() + ${millis(sql, leaseMs)} FROM claimed
        ), served AS (
          INSERT INTO webhook_endpoint_turns (endpoint_id, served_at)
          SELECT DISTINCT endpoint_id, now() FROM claimed ORDER BY endpoint_id
          ON CONFLICT (endpoint_id) DO UPDATE SET served_at = excluded.served_at
        )
        SELECT c.id::text, c.endpoint_id::text, c.partner_id::text, c.payload, c.attempt_count, c.round_start, c.claim_token,
               c.traceparent, e.url, e.enabled, e.secret_encrypted,
               CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret_encrypted END AS previous_secret_encrypted
        FROM claimed c JOIN webhook_endpoints e ON e.id = c.endpoint_id`;
      return rows.map((r) => ({
        id: r.id,
        endpointId: r.endpoint_id,
        partnerId: r.partner_id,
        payload: r.payload,
        attempt: r.attempt_count,
        attemptInRound: r.attempt_count - r.round_start,
        claimToken: r.claim_token,
        url: r.url,
        endpointEnabled: r.enabled,
        secretEncrypted: r.secret_encrypted,
        previousSecretEncrypted: r.previous_secret_encrypted ?? null,
        traceparent: r.traceparent ?? null,
      }));
    },

    /** Attempts whose worker died (their lease ran out a minute ago or more): they hold nothing any more. */
    async forgetExpiredAttempts(): Promise<number> {
      const rows = await sql`
        DELETE FROM webhook_attempts_in_flight WHERE held_until < now() - interval '1 minute' RETURNING 1`;
      return rows.length;
    },

    /**
     * Gives the claim back without spending its attempt (a failure of ours: nothing was sent): still pending, due
     * after delayMs, the attempt the claim counted taken back, the endpoint's health untouched. False when the
     * claim was taken over meanwhile.
     */
    async postpone(claim: ClaimedDelivery, reason: string, delayMs: number): Promise<boolean> {
      const rows = await sql`
        WITH ended AS (${attemptEnded(sql, claim)})
        UPDATE webhook_deliveries SET attempt_count = attempt_count - 1, next_attempt_at = now() + ${millis(sql, delayMs)}, last_error = ${reason},
          claimed_at = NULL
        WHERE id = ${claim.id}::uuid AND claim_token = ${claim.claimToken} AND status = 'pending'
        RETURNING id`;
      return rows.length > 0;
    },

    /**
     * The attempt, the delivery's new state and the endpoint's health, in one transaction; nothing at all when the
     * claim was taken over (its fencing token is no longer the delivery's).
     */
    async record(
      claim: ClaimedDelivery,
      attempt: AttemptRecord | null,
      decision: RecordedDecision,
    ): Promise<RecordResult> {
      return sql.begin(async (tx) => {
        // The attempt no longer holds a worker, whether its outcome is applied or not.
        await attemptEnded(tx, claim);
        const status = decision.status === "endpoint-disabled" ? "failed" : decision.status;
        const error = decision.status === "endpoint-disabled" ? "endpoint disabled" : (attempt?.error ?? null);
        const [updated] = await tx`
          UPDATE webhook_deliveries SET
            status = ${status},
            next_attempt_at = ${decision.status === "pending" ? tx`now() + ${millis(tx, decision.delayMs)}` : tx`NULL`},
            last_status_code = ${attempt?.statusCode ?? null}, last_error = ${error},
            delivered_at = ${decision.status === "delivered" ? tx`now()` : tx`delivered_at`}, claimed_at = NULL
          WHERE id = ${claim.id}::uuid AND claim_token = ${claim.claimToken} AND status = 'pending'
          RETURNING id`;
        if (!updated) return { applied: false, disabled: null };
        if (!attempt) return { applied: true, disabled: null };
        await tx`
          INSERT INTO webhook_attempts (delivery_id, attempt, at, status_code, latency_ms, error, response_excerpt)
          VALUES (${claim.id}::uuid, ${claim.attempt}, ${attempt.at}, ${attempt.statusCode}, ${attempt.latencyMs}, ${attempt.error},
                  ${attempt.responseExcerpt ?? null})
          ON CONFLICT (delivery_id, attempt) DO NOTHING`;

        if (decision.status === "delivered") {
          // At most one write a minute per healthy endpoint: a busy endpoint's row is not a hot spot.
          await tx`
            UPDATE webhook_endpoints SET failing_since = NULL, last_success_at = now()
            WHERE id = ${claim.endpointId}::bigint
              AND (failing_since IS NOT NULL OR last_success_at IS NULL OR last_success_at < now() - interval '1 minute')`;
          return { applied: true, disabled: null };
        }
        if (decision.status === "failed" && decision.disable) {
          const disabled = await disable(tx, claim.endpointId, decision.disable.cause, decision.disable.reason);
          return { applied: true, disabled: disabled ? "gone" : null };
        }
        const [endpoint] = await tx`
          UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, ${attempt.at})
          WHERE id = ${claim.endpointId}::bigint
          RETURNING enabled, failing_since, failing_since <= now() - ${millis(tx, opts.disableAfterMs)} AS overdue`;
        if (endpoint?.enabled && endpoint.overdue) {
          const since = new Date(endpoint.failing_since).toISOString();
          const reason = `every delivery attempt failed since ${since}; the last one: ${attempt.error}`;
          if (await disable(tx, claim.endpointId, "failing", reason)) return { applied: true, disabled: "failing" };
        }
        return { applied: true, disabled: null };
      });
    },
  };
}

export type DeliveryRepository = ReturnType<typeof createDeliveryRepository>;
