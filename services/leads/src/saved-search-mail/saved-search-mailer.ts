// Delivers the saved-search e-mails the marketplace composed (table saved_search_mail, migration 0042) through the
// leads service's SMTP relay, the one SMTP configuration of the stack. Each message is claimed (instances share the
// rows: SKIP LOCKED, with a claim that runs out if a worker dies), sent with its one-click unsubscribe headers
// (RFC 8058: List-Unsubscribe with the search's URL, List-Unsubscribe-Post: List-Unsubscribe=One-Click), then deleted:
// an address is kept no longer than needed. The recipient's server deferring (4xx) retries with backoff up to
// `maxAttempts`; refusing (5xx), the message is dropped; our relay down, it waits without spending an attempt.
import { maskEmail, type Logger } from "@pss/service-kit";
import type postgres from "postgres";
import { retryDelayMs } from "../forwarding/lead-forwarder.ts";
import { classifySmtpError, describeSmtpError } from "../forwarding/smtp-errors.ts";

export interface SavedSearchMessage {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  messageId: string;
  headers: Record<string, string>;
}

export interface SavedSearchTransport {
  sendMail(message: SavedSearchMessage): Promise<unknown>;
}

export interface SavedSearchMailerDeps {
  sql: postgres.Sql;
  transport: SavedSearchTransport;
  logger: Logger;
  from: string;
  messageIdDomain: string;
  /** A message the recipient's server keeps deferring is dropped after this many attempts. */
  maxAttempts: number;
  retryBaseMs: number;
  /** A claim older than this was abandoned by a dead worker and may be taken again. */
  claimTimeoutMs: number;
  /** Messages claimed per round. */
  batch?: number;
}

interface Claimed {
  id: string;
  recipient: string;
  subject: string;
  text_body: string;
  html_body: string;
  unsubscribe_url: string;
  attempts: number;
  claim_token: string;
}

export type MailOutcome = "sent" | "retry" | "dropped" | "postponed" | "superseded";

export function createSavedSearchMailer(deps: SavedSearchMailerDeps) {
  const log = deps.logger.child({ component: "saved-search-mail" });

  async function claim(): Promise<Claimed[]> {
    return deps.sql<Claimed[]>`
      UPDATE saved_search_mail m SET claim_token = gen_random_uuid(),
        claimed_until = now() + ${deps.claimTimeoutMs}::int * interval '1 millisecond'
      WHERE m.id IN (
        SELECT id FROM saved_search_mail
        WHERE next_attempt_at <= now() AND (claimed_until IS NULL OR claimed_until < now())
        ORDER BY next_attempt_at, id LIMIT ${deps.batch ?? 10}
        FOR UPDATE SKIP LOCKED)
      RETURNING m.id::text AS id, m.recipient, m.subject, m.text_body, m.html_body, m.unsubscribe_url, m.attempts,
        m.claim_token::text AS claim_token`;
  }

  /** Fenced by the claim: a worker whose claim ran out and was taken over records nothing. */
  async function settle(m: Claimed, outcome: MailOutcome, error?: string): Promise<MailOutcome> {
    let rows: postgres.RowList<postgres.Row[]>;
    if (outcome === "sent" || outcome === "dropped")
      rows =
        await deps.sql`DELETE FROM saved_search_mail WHERE id = ${m.id} AND claim_token = ${m.claim_token}::uuid RETURNING 1`;
    else {
      const attempts = outcome === "retry" ? m.attempts + 1 : m.attempts;
      const delay = retryDelayMs(Math.max(1, attempts), deps.retryBaseMs);
      rows = await deps.sql`
        UPDATE saved_search_mail SET attempts = ${attempts}, claim_token = NULL, claimed_until = NULL,
          next_attempt_at = now() + ${delay}::int * interval '1 millisecond', last_error = ${error ?? null}
        WHERE id = ${m.id} AND claim_token = ${m.claim_token}::uuid RETURNING 1`;
    }
    return rows.length ? outcome : "superseded";
  }

  async function deliver(m: Claimed): Promise<MailOutcome> {
    try {
      await deps.transport.sendMail({
        from: deps.from,
        to: m.recipient,
        subject: m.subject,
        text: m.text_body,
        html: m.html_body,
        messageId: `<saved-search-${m.id}@${deps.messageIdDomain}>`,
        headers: {
          "List-Unsubscribe": `<${m.unsubscribe_url}>`,
          "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
        },
      });
    } catch (err) {
      const failure = classifySmtpError(err);
      const reason = describeSmtpError(err);
      if (failure === "unavailable") {
        log.warn("saved-search mail postponed: our SMTP relay is unavailable", { mailId: m.id, err: reason });
        return settle(m, "postponed", reason);
      }
      if (failure === "permanent" || m.attempts + 1 >= deps.maxAttempts) {
        log.warn("saved-search mail dropped: the recipient's server refused it", {
          mailId: m.id,
          to: maskEmail(m.recipient),
          err: reason,
        });
        return settle(m, "dropped", reason);
      }
      return settle(m, "retry", reason);
    }
    log.info("saved-search mail sent", { mailId: m.id, to: maskEmail(m.recipient) });
    return settle(m, "sent");
  }

  return {
    /** One round: what was due, sent (or rescheduled); true when a full batch was claimed (more may wait). */
    async tick(): Promise<boolean> {
      const claimed = await claim();
      for (const m of claimed) await deliver(m);
      return claimed.length >= (deps.batch ?? 10);
    },
  };
}
