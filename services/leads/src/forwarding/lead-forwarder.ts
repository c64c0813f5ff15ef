// Forwards one lead to its broker by e-mail, at most once: claim, send, record the outcome. Used by the
// event consumer (first attempt) and by the retry sweeper (later attempts).
import { maskEmail, type Logger } from "@pss/service-kit";
import type postgres from "postgres";
import { claimLead, markFailed, markRetry, markSent } from "./delivery-repository.ts";
import { composeLeadEmail, type LeadEmail } from "./lead-email.ts";
import { classifySmtpError, describeSmtpError } from "./smtp-errors.ts";

export interface MailTransport {
  sendMail(message: LeadEmail & { from: string }): Promise<unknown>;
}

export interface DeliveryPolicy {
  /** A lead the server keeps deferring (4xx) is marked failed after this many attempts. */
  maxAttempts: number;
  /** First retry delay; doubles per attempt up to MAX_RETRY_DELAY_MS. */
  retryBaseMs: number;
  /** A 'sending' claim older than this was abandoned by a dead worker and may be taken again. */
  claimTimeoutMs: number;
}

export interface LeadForwarderDeps {
  sql: postgres.Sql;
  transport: MailTransport;
  logger: Logger;
  /** SMTP_FROM as configured, e.g. "Marketplace leads <leads@market.example>". */
  from: string;
  messageIdDomain: string;
  publicBaseUrl: string;
  policy: DeliveryPolicy;
}

export type ForwardOutcome = "sent" | "retry" | "failed" | "skipped";

export const MAX_RETRY_DELAY_MS = 15 * 60 * 1000;

/** Exponential backoff with +-20 % jitter, so leads deferred together do not retry in lockstep. */
export function retryDelayMs(attempts: number, baseMs: number, random = Math.random): number {
  const delay = Math.min(baseMs * 2 ** Math.max(0, attempts - 1), MAX_RETRY_DELAY_MS);
  return Math.round(delay * (0.8 + random() * 0.4));
}

async function persistently(what: () => Promise<void>): Promise<void> {
  // After a successful send, losing the 'sent' mark would mean a second e-mail later: try harder.
  for (let attempt = 1; ; attempt++) {
    try {
      return await what();
    } catch (err) {
      if (attempt >= 5) throw err;
      await Bun.sleep(100 * 2 ** attempt);
    }
  }
}

export function createLeadForwarder(deps: LeadForwarderDeps) {
  const { policy } = deps;

  return {
    /** `logger`: the lead event's (its lines carry the intake request's ID) when a consumer forwards; default the service's. */
    async forward(leadId: string, logger: Logger = deps.logger): Promise<ForwardOutcome> {
      const log = logger.child({ component: "lead-forwarder" });
      const lead = await claimLead(deps.sql, leadId, policy.claimTimeoutMs);
      // Already sent or failed, not due yet, being sent by another worker, or unknown.
      if (!lead) return "skipped";
      const recipient = lead.forwardingEmail ?? lead.brokerEmail;
      const fields = { leadId, listingId: lead.listingId, to: maskEmail(recipient), attempt: lead.attempts };
      const mail = composeLeadEmail({ ...lead, recipient }, { publicBaseUrl: deps.publicBaseUrl, messageIdDomain: deps.messageIdDomain });
      try {
        await deps.transport.sendMail({ from: deps.from, ...mail });
      } catch (err) {
        const kind = classifySmtpError(err);
        const reason = describeSmtpError(err);
        const smtp = { kind, code: (err as { code?: string }).code, responseCode: (err as { responseCode?: number }).responseCode };
        if (kind === "permanent" || (kind === "transient" && lead.attempts >= policy.maxAttempts)) {
          await markFailed(deps.sql, leadId, kind === "permanent" ? reason : `gave up after ${lead.attempts} attempts: ${reason}`);
          log.error("lead forwarding failed", { ...fields, ...smtp });
          return "failed";
        }
        const delayMs = retryDelayMs(lead.attempts, policy.retryBaseMs);
        await markRetry(deps.sql, leadId, reason, delayMs);
        log.warn("lead forwarding deferred", { ...fields, ...smtp, retryInMs: delayMs });
        return "retry";
      }
      await persistently(() => markSent(deps.sql, leadId, recipient));
      log.info("lead forwarded", fields);
      return "sent";
    },
  };
}

export type LeadForwarder = ReturnType<typeof createLeadForwarder>;
