// Forwards one lead to its broker by e-mail, at most once: claim, send, record the outcome. Used by the
// event consumer (first attempt) and by the retry sweeper (later attempts).
// Our relay or PostgreSQL being down never spends the lead's attempts (smtp-errors.ts decides whose failure it is).
import {
  countOutageWaits,
  inChildSpan,
  maskEmail,
  SpanKind,
  outageDelayMs,
  waitOutOutage,
  type Logger,
  type OutageBackoff,
  type OutageMetrics,
} from "@pss/service-kit";
import type postgres from "postgres";
import { claimLead, markFailed, markPostponed, markRetry, markSent, renewClaim } from "./delivery-repository.ts";
import { composeLeadEmail, type LeadEmail } from "./lead-email.ts";
import { classifySmtpError, describeSmtpError, isDatabaseOutage } from "./smtp-errors.ts";

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
  /** Waits on our relay and PostgreSQL (leads_dependency_waits_total). */
  outageMetrics?: OutageMetrics;
  /** How long a lead is postponed while our relay is down: 1 s doubling to at most 30 s by default. */
  outageBackoff?: OutageBackoff;
}

/**
 * superseded: this worker's claim ran out and another worker took the lead meanwhile; its outcome was not recorded.
 * postponed: our relay was unavailable; the lead waits for it without spending an attempt.
 */
export type ForwardOutcome = "sent" | "retry" | "failed" | "skipped" | "superseded" | "postponed";

export const MAX_RETRY_DELAY_MS = 15 * 60 * 1000;

/** Exponential backoff with +-20 % jitter, so leads deferred together do not retry in lockstep. */
export function retryDelayMs(attempts: number, baseMs: number, random = Math.random): number {
  const delay = Math.min(baseMs * 2 ** Math.max(0, attempts - 1), MAX_RETRY_DELAY_MS);
  return Math.round(delay * (0.8 + random() * 0.4));
}

export function createLeadForwarder(deps: LeadForwarderDeps) {
  const { policy } = deps;
  /** Our relay's unavailable answers in a row: how long the next postponement is. */
  let relayFailures = 0;
  /**
   * Writes after a claim wait through an outage of PostgreSQL instead of leaving the lead 'sending' until its claim
   * runs out (a second send, an attempt spent). Above all after a send: losing the 'sent' mark would mean a second
   * e-mail, so it is tried until PostgreSQL answers (a stop cannot cut it short; the shutdown's step timeout can).
   */
  const { metrics: outageMetrics, waiting: waitingForDatabase } = countOutageWaits("postgres", deps.outageMetrics);
  const recorded = <T>(what: string, log: Logger, write: () => Promise<T>) =>
    waitOutOutage(write, {
      dependency: "postgres",
      what,
      isOutage: isDatabaseOutage,
      logger: log,
      metrics: outageMetrics,
      backoff: deps.outageBackoff,
    });

  return {
    /** Whether an outcome is waiting for PostgreSQL: the sweeper claims nothing meanwhile (its claim may run out). */
    waitingForDatabase: () => waitingForDatabase() > 0,
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
        log.warn("lead delivery outcome not recorded: the claim ran out and another worker took the lead", {
          ...fields,
          outcome: what,
        });
        return "superseded";
      };
      const mail = composeLeadEmail(
        { ...lead, recipient },
        { publicBaseUrl: deps.publicBaseUrl, messageIdDomain: deps.messageIdDomain },
      );
      // The claim is renewed (fenced by its token) just before the send: a worker whose PostgreSQL stalled after
      // the claim, past the claim timeout, finds another worker took the lead over and sends nothing. An answer
      // that took more than half the claim timeout leaves too little of the renewed claim to be sure it outlives the
      // send: the lead is given back unsent (no attempt spent). What stays open: docs/leads.md, "At least once".
      const renewing = performance.now();
      if (!(await recorded("renewing the claim before sending", log, () => renewClaim(deps.sql, claim)))) {
        log.warn("lead not sent: the claim ran out and another worker took the lead", fields);
        return "superseded";
      }
      if (performance.now() - renewing > policy.claimTimeoutMs / 2) {
        if (
          !(await recorded("giving a lead back unsent", log, () =>
            markPostponed(deps.sql, claim, "PostgreSQL answered too slowly to send safely", 0),
          ))
        )
          return superseded("postponed");
        log.warn("lead not sent: renewing its claim took too long; given back without spending an attempt", fields);
        return "postponed";
      }
      try {
        // The lead's trace reaches the e-mail: a client span around the SMTP conversation.
        await inChildSpan("lead e-mail send", () => deps.transport.sendMail({ from: deps.from, ...mail }), {
          kind: SpanKind.CLIENT,
          attributes: { "pss.lead_id": leadId, "pss.attempt": lead.attempts, "pss.listing_id": String(lead.listingId) },
        });
      } catch (err) {
        const kind = classifySmtpError(err);
        const reason = describeSmtpError(err);
        const smtp = {
          kind,
          code: (err as { code?: string }).code,
          responseCode: (err as { responseCode?: number }).responseCode,
        };
        if (kind === "unavailable") {
          // Our relay, not the lead: no attempt spent, tried again after a bounded back-off (at most 30 s by default).
          relayFailures++;
          const delayMs = outageDelayMs(relayFailures, deps.outageBackoff);
          deps.outageMetrics?.waited("smtp");
          await recorded("postponing a lead", log, () =>
            markPostponed(deps.sql, claim, `our mail relay is unavailable: ${reason}`, delayMs),
          );
          log.warn("smtp unavailable; lead postponed without spending an attempt", {
            ...fields,
            ...smtp,
            dependency: "smtp",
            retryInMs: delayMs,
          });
          return "postponed";
        }
        relayFailures = 0;
        if (kind === "permanent" || (kind === "transient" && lead.attempts >= policy.maxAttempts)) {
          if (
            !(await recorded("recording a failed lead", log, () =>
              markFailed(
                deps.sql,
                claim,
                kind === "permanent" ? reason : `gave up after ${lead.attempts} attempts: ${reason}`,
              ),
            ))
          )
            return superseded("failed");
          log.error("lead forwarding failed", { ...fields, ...smtp });
          return "failed";
        }
        const delayMs = retryDelayMs(lead.attempts, policy.retryBaseMs);
        if (!(await recorded("recording a deferred lead", log, () => markRetry(deps.sql, claim, reason, delayMs))))
          return superseded("retry");
        log.warn("lead forwarding deferred", { ...fields, ...smtp, retryInMs: delayMs });
        return "retry";
      }
      relayFailures = 0;
      // Sent, but another worker holds the lead now (and may have sent it too): its outcome stands, not ours.
      if (!(await recorded("recording a sent lead", log, () => markSent(deps.sql, claim, recipient))))
        return superseded("sent");
      log.info("lead forwarded", fields);
      return "sent";
    },
  };
}

export type LeadForwarder = ReturnType<typeof createLeadForwarder>;
