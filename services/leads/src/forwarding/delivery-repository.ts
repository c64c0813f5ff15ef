// Delivery state of each lead. The claim (pending -> sending) is one conditional UPDATE: of two workers
// handling the same lead at once, exactly one gets the row back and sends. Every claim also takes a new fencing
// token (delivery_claim_token + 1, migration 0019) and every outcome is written only while the row still carries
// it: a worker whose claim ran out mid-send (a slow SMTP server) and was taken over changes nothing afterwards.
import type postgres from "postgres";
import type { LeadForEmail } from "./lead-email.ts";

/** What the e-mail needs, plus where it may go (the recipient is chosen from these) and the attempt count. */
export interface ClaimedLead extends Omit<LeadForEmail, "recipient"> {
  brokerEmail: string;
  forwardingEmail: string | null;
  /** Including this one. */
  attempts: number;
  /** The fencing token of this claim: the outcome is written only while the lead still carries it. */
  claimToken: number;
}

const seconds = (ms: number) => ms / 1000;

/**
 * Takes the lead for sending when it is due: pending with its next attempt time reached, or left in
 * 'sending' longer than claimTimeoutMs by a worker that died mid-send.
 */
export async function claimLead(
  sql: postgres.Sql,
  leadId: string,
  claimTimeoutMs: number,
): Promise<ClaimedLead | null> {
  const [row] = await sql<ClaimedLead[]>`
    WITH claimed AS (
      UPDATE leads SET delivery_state = 'sending', delivery_claimed_at = now(), delivery_attempts = delivery_attempts + 1,
        delivery_claim_token = delivery_claim_token + 1
      -- Test-mode leads are never e-mailed (they are stored as 'skipped'; the mode check keeps that true regardless).
      WHERE id = ${leadId} AND mode = 'live'
        AND ((delivery_state = 'pending' AND delivery_next_attempt_at <= now())
          OR (delivery_state = 'sending' AND delivery_claimed_at < now() - make_interval(secs => ${seconds(claimTimeoutMs)})))
      RETURNING id, listing_id, broker_id, buyer_name, buyer_email, buyer_phone, message, delivery_attempts, delivery_claim_token
    )
    SELECT c.id AS "leadId", c.listing_id::text AS "listingId", l.title AS "listingTitle", c.buyer_name AS "buyerName",
           c.buyer_email AS "buyerEmail", c.buyer_phone AS "buyerPhone", c.message, b.email AS "brokerEmail",
           b.forwarding_email AS "forwardingEmail", c.delivery_attempts AS attempts, c.delivery_claim_token AS "claimToken"
    FROM claimed c JOIN listings l ON l.id = c.listing_id JOIN brokers b ON b.id = c.broker_id`;
  return row ?? null;
}

/** The claim a late write belongs to; every write below is a no-op (returns false) once another worker took the lead. */
export interface LeadClaim {
  leadId: string;
  claimToken: number;
}

/**
 * Renews the claim right before its e-mail goes out (delivery_claimed_at = now()): false when the lead no longer
 * carries this claim's token (the claim ran out while this worker was stalled and another worker took the lead).
 */
export async function renewClaim(sql: postgres.Sql, claim: LeadClaim): Promise<boolean> {
  const rows = await sql`
    UPDATE leads SET delivery_claimed_at = now()
    WHERE id = ${claim.leadId} AND delivery_state = 'sending' AND delivery_claim_token = ${claim.claimToken} RETURNING id`;
  return rows.length > 0;
}

export async function markSent(sql: postgres.Sql, claim: LeadClaim, recipient: string): Promise<boolean> {
  const rows = await sql`
    UPDATE leads SET delivery_state = 'sent', delivered_at = now(), delivered_to = ${recipient}, delivery_last_error = NULL
    WHERE id = ${claim.leadId} AND delivery_state = 'sending' AND delivery_claim_token = ${claim.claimToken} RETURNING id`;
  return rows.length > 0;
}

export async function markRetry(sql: postgres.Sql, claim: LeadClaim, error: string, delayMs: number): Promise<boolean> {
  const rows = await sql`
    UPDATE leads SET delivery_state = 'pending', delivery_last_error = ${error},
      delivery_next_attempt_at = now() + make_interval(secs => ${seconds(delayMs)})
    WHERE id = ${claim.leadId} AND delivery_state = 'sending' AND delivery_claim_token = ${claim.claimToken} RETURNING id`;
  return rows.length > 0;
}

export async function markFailed(sql: postgres.Sql, claim: LeadClaim, error: string): Promise<boolean> {
  const rows = await sql`
    UPDATE leads SET delivery_state = 'failed', delivery_last_error = ${error}
    WHERE id = ${claim.leadId} AND delivery_state = 'sending' AND delivery_claim_token = ${claim.claimToken} RETURNING id`;
  return rows.length > 0;
}

/**
 * Our relay was unavailable: the lead goes back to pending, due after delayMs, and the attempt its claim counted
 * is taken back (not the lead's fault). The last error says why it waits. Fenced like every late write.
 */
export async function markPostponed(
  sql: postgres.Sql,
  claim: LeadClaim,
  error: string,
  delayMs: number,
): Promise<boolean> {
  const rows = await sql`
    UPDATE leads SET delivery_state = 'pending', delivery_last_error = ${error}, delivery_attempts = delivery_attempts - 1,
      delivery_next_attempt_at = now() + make_interval(secs => ${seconds(delayMs)})
    WHERE id = ${claim.leadId} AND delivery_state = 'sending' AND delivery_claim_token = ${claim.claimToken} RETURNING id`;
  return rows.length > 0;
}

/**
 * Leads the retry sweeper should try now: scheduled retries and postponements, claims abandoned mid-send, and first attempts the
 * event path has not made within firstAttemptGraceMs (for instance while forwarding was not configured).
 */
export async function dueLeadIds(
  sql: postgres.Sql,
  opts: { limit: number; firstAttemptGraceMs: number; claimTimeoutMs: number; partnerIds?: string[] },
): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    SELECT id FROM leads
    WHERE delivery_state IN ('pending', 'sending') AND delivery_next_attempt_at <= now()
      -- A last error with no attempt counted: postponed while our relay was down, so already past the event path.
      AND ((delivery_state = 'pending' AND (delivery_attempts > 0 OR delivery_last_error IS NOT NULL
          OR created_at < now() - make_interval(secs => ${seconds(opts.firstAttemptGraceMs)})))
        OR (delivery_state = 'sending' AND delivery_claimed_at < now() - make_interval(secs => ${seconds(opts.claimTimeoutMs)})))
      ${opts.partnerIds ? sql`AND partner_id = ANY(${opts.partnerIds}::uuid[])` : sql``}
    ORDER BY delivery_next_attempt_at
    LIMIT ${opts.limit}`;
  return rows.map((r) => r.id);
}
