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

/** superseded: this worker's claim ran out and another worker took the lead meanwhile; its outcome was not recorded. */
export type ForwardOutcome = "sent" | "retry" | "failed" | "skipped" | "superseded";

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
      // Every write below carries this claim's fencing token: a send that outlived its claim records nothing.
      const claim = { leadId, claimToken: lead.claimToken };
      const superseded = (what: string): ForwardOutcome => {
        log.warn("lead delivery outcome not recorded: the claim ran out and another worker took the lead", { ...fields, outcome: what });
        return "superseded";
      };
      const mail = composeLeadEmail({ ...lead, recipient }, { publicBaseUrl: deps.publicBaseUrl, messageIdDomain: deps.messageIdDomain });
      try {
        await deps.transport.sendMail({ from: deps.from, ...mail });
      } catch (err) {
        const kind = classifySmtpError(err);
        const reason = describeSmtpError(err);
        const smtp = { kind, code: (err as { code?: string }).code, responseCode: (err as { responseCode?: number }).responseCode };
        if (kind === "permanent" || (kind === "transient" && lead.attempts >= policy.maxAttempts)) {
          if (!(await markFailed(deps.sql, claim, kind === "permanent" ? reason : `gave up after ${lead.attempts} attempts: ${reason}`))) return superseded("failed");
          log.error("lead forwarding failed", { ...fields, ...smtp });
          return "failed";
        }
        const delayMs = retryDelayMs(lead.attempts, policy.retryBaseMs);
        if (!(await markRetry(deps.sql, claim, reason, delayMs))) return superseded("retry");
        log.warn("lead forwarding deferred", { ...fields, ...smtp, retryInMs: delayMs });
        return "retry";
      }
      let recorded = false;
      await persistently(async () => void (recorded = await markSent(deps.sql, claim, recipient)));
      // Sent, but another worker holds the lead now (and may have sent it too): its outcome stands, not ours.
      if (!recorded) return superseded("sent");
      log.info("lead forwarded", fields);
      return "sent";
    },
  };
}

export type LeadForwarder = ReturnType<typeof createLeadForwarder>;
