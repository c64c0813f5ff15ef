// Whose failure it is, the one place the leads service decides it: a lead spends a delivery attempt only on
// the recipient's server's answer (4xx, then give up; 5xx at once). Our relay or our PostgreSQL being down is
// never the lead's fault: the lead is postponed without spending an attempt (relay), or the write waits until
// PostgreSQL answers (database), however long either outage lasts (service-kit outage-wait.ts).
import { isDependencyUnavailable } from "@pss/service-kit";

// What an SMTP failure means for one lead:
// - permanent: the server refused this message or recipient (5xx): retrying cannot help;
// - transient: the server asked to try later (4xx, e.g. greylisting or a full mailbox): retry, then give up;
// - unavailable: our relay cannot be reached or refuses us (connection, timeout, TLS, authentication, our
//   sender address): not this lead's fault, so retry without giving up.

export type SmtpFailure = "permanent" | "transient" | "unavailable";

interface SmtpErrorLike {
  code?: string;
  responseCode?: number;
  command?: string;
  response?: string;
  message?: string;
}

export function classifySmtpError(err: unknown): SmtpFailure {
  const e = (err ?? {}) as SmtpErrorLike;
  if (e.code === "EAUTH" || e.code === "ENOAUTH") return "unavailable";
  const status = e.responseCode;
  if (typeof status !== "number") return "unavailable";
  if (/^MAIL FROM/i.test(e.command ?? "")) return "unavailable";
  if (status >= 500 && status < 600) return "permanent";
  if (status >= 400 && status < 500) return "transient";
  return "unavailable";
}

/** A short, storable reason: the server's reply or the error code, never our message content. */
export function describeSmtpError(err: unknown): string {
  const e = (err ?? {}) as SmtpErrorLike;
  const reply = e.response?.replace(/\s+/g, " ").trim();
  const text = reply || `${e.code ?? "error"}: ${e.message ?? String(err)}`;
  return text.slice(0, 500);
}

/** Whether a failed PostgreSQL statement failed because the server is unreachable (wait), not because of the statement. */
export function isDatabaseOutage(err: unknown): boolean {
  return isDependencyUnavailable(err);
}
