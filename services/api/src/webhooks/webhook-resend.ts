// Re-sending (docs/webhooks.md "Re-sending"): every request a partner makes to send deliveries again, or more of
// them (retry, recover, replay, test), runs through one frame here:
//
// - One daily budget per partner and audience over the last 24 hours (webhook_replays, the re-send ledger): an
//   endpoint carrying lead data draws from the lead audience's, any other from the records audience's, each
//   WEBHOOK_RESEND_DAILY_BUDGET. Lead re-sends therefore spend nothing a key without lead tracking can see.
// - Check and act under one lock (issue 37): the endpoint row is locked FOR SHARE in the key's scope for the whole
//   transaction, so an endpoint that gains lead.received, is disabled or is deleted meanwhile is either seen so
//   (404 or 409 as for the rest) or changes only after the re-send is queued (a disable then fails what was
//   queued). The audience's budget is serialised by an advisory lock taken before the row lock.
// - Lock order, so the delivery worker (which locks a delivery, then updates its endpoint) never deadlocks with a
//   re-send: while holding the endpoint, a re-send waits for no delivery row the worker may hold: a single
//   delivery is locked NOWAIT (lock_not_available, retried by retryTransaction), several are only ever rows in a
//   state the worker does not write (failed, delivered).
import type postgres from "postgres";
import { RateLimitedError } from "../http/errors.ts";
import { ContendedWriteError, retryTransaction } from "../records/transaction-retry.ts";
import { inScope, type WebhookScope } from "./webhook-endpoint-repository.ts";

type Tx = postgres.TransactionSql;

/** Deliveries a partner may re-send per audience in 24 hours (WEBHOOK_RESEND_DAILY_BUDGET). */
export const DEFAULT_RESEND_DAILY_BUDGET = 10_000;

export type ResendKind = "retry" | "recover" | "replay" | "test";

export type ActionOutcome<T> = { ok: T } | { notFound: true } | { endpointDisabled: true };

/** The endpoint a re-send goes to, locked FOR SHARE for the transaction. */
export interface ResendEndpoint {
  id: string;
  externalId: string;
  enabled: boolean;
  events: string[];
  version: number;
  /** Its audience: whose budget the re-send draws from. */
  carriesLeadData: boolean;
}

export const RESEND_BUDGET_DOC =
  "A daily budget of re-sent deliveries (retry, recover, replay and test together) per partner over the last 24 hours, one for endpoints carrying lead data and one for the others: beyond it, wait Retry-After seconds";

/** The 429's error: the OpenAPI document's examples (webhook-docs.ts) show it as written here. */
export function resendBudgetReached(used: number, dailyBudget: number, wanted: number, hint = ""): string {
  return `Daily re-send budget reached: ${used} of ${dailyBudget} deliveries re-sent in the last 24 hours (retry, recover, replay and test together), and this would queue ${wanted} more; retry after Retry-After seconds${hint}`;
}

export interface ResendBudget {
  /** Re-sent deliveries of this audience in the last 24 hours. */
  used: number;
  /** What is left of the budget now. */
  left: number;
  /** 429 unless `wanted` more fit now; its Retry-After is when they will. */
  require(wanted: number, hint?: string): Promise<void>;
  /** Writes what was queued to the ledger (id: the replay's, which its deliveries carry). */
  spend(kind: ResendKind, queued: number, id?: string): Promise<void>;
}

/** Rows of webhook_endpoints (alias e) a re-send may name: the key's scope and `where`. */
type EndpointCondition = (tx: Tx) => postgres.PendingQuery<postgres.Row[]>;

const MAX_AUDIENCE_CHANGES = 3;

/**
 * Runs `act` in one transaction with the endpoint `where` names (in the key's scope) locked, enabled, and its
 * audience's budget in hand. 404 and 409 come before anything else; a deadlock or a NOWAIT lock that was taken runs
 * the whole transaction again.
 */
export async function resend<T>(
  sql: postgres.Sql,
  scope: WebhookScope,
  dailyBudget: number,
  where: EndpointCondition,
  act: (tx: Tx, endpoint: ResendEndpoint, budget: ResendBudget) => Promise<ActionOutcome<T>>,
): Promise<ActionOutcome<T>> {
  for (let i = 0; i < MAX_AUDIENCE_CHANGES; i++) {
    const outcome = await retryTransaction(() =>
      sql.begin(async (tx): Promise<ActionOutcome<T> | "audience changed"> => {
        const [seen] =
          await tx`SELECT e.carries_lead_data FROM webhook_endpoints e WHERE ${inScope(tx, scope, "e")} AND ${where(tx)}`;
        if (!seen) return { notFound: true };
        const leadData = seen.carries_lead_data as boolean;
        await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`pss.webhook-resend:${scope.partnerId}:${leadData}`}, 0))`;
        const [row] = await tx`
          SELECT e.id::text, COALESCE(e.shown_external_id, e.external_id) AS external_id, e.enabled, e.events, e.version, e.carries_lead_data
          FROM webhook_endpoints e WHERE ${inScope(tx, scope, "e")} AND ${where(tx)}
          FOR SHARE OF e`;
        if (!row) return { notFound: true };
        // It gained lead data between the two reads: the other audience's budget (and lock) is the one to take.
        if (row.carries_lead_data !== leadData) return "audience changed";
        if (!row.enabled) return { endpointDisabled: true };
        const endpoint: ResendEndpoint = {
          id: row.id,
          externalId: row.external_id,
          enabled: row.enabled,
          events: row.events,
          version: row.version,
          carriesLeadData: leadData,
        };
        return act(tx, endpoint, await readBudget(tx, scope.partnerId, endpoint, dailyBudget));
      }),
    );
    if (outcome !== "audience changed") return outcome;
  }
  throw new ContendedWriteError();
}

async function readBudget(
  tx: Tx,
  partnerId: string,
  endpoint: ResendEndpoint,
  dailyBudget: number,
): Promise<ResendBudget> {
  await tx`DELETE FROM webhook_replays WHERE partner_id = ${partnerId}::uuid AND created_at <= now() - interval '1 day'`;
  const window = tx`
    SELECT id, created_at, queued FROM webhook_replays
    WHERE partner_id = ${partnerId}::uuid AND lead_data = ${endpoint.carriesLeadData} AND created_at > now() - interval '1 day'`;
  const [{ used }] = (await tx`SELECT COALESCE(sum(queued), 0)::int AS used FROM (${window}) w`) as unknown as [
    { used: number },
  ];
  return {
    used,
    left: Math.max(0, dailyBudget - used),
    async require(wanted, hint = "") {
      if (used + wanted <= dailyBudget) return;
      // Retry-After: when enough of what was spent has aged out of the 24 hours for `wanted` to fit.
      const [{ retry_after }] = (await tx`
        WITH r AS (SELECT created_at, sum(queued) OVER (ORDER BY created_at, id) AS freed FROM (${window}) w)
        SELECT ceil(extract(epoch FROM min(created_at) + interval '1 day' - now()))::int AS retry_after FROM r
        WHERE ${used} - freed + ${wanted} <= ${dailyBudget}`) as unknown as [{ retry_after: number | null }];
      throw new RateLimitedError(Math.max(1, retry_after ?? 1), resendBudgetReached(used, dailyBudget, wanted, hint));
    },
    async spend(kind, queued, id = crypto.randomUUID()) {
      if (queued <= 0) return;
      await tx`
        INSERT INTO webhook_replays (id, partner_id, endpoint_id, lead_data, queued, kind)
        VALUES (${id}::uuid, ${partnerId}::uuid, ${endpoint.id}::bigint, ${endpoint.carriesLeadData}, ${queued}, ${kind})`;
    },
  };
}
