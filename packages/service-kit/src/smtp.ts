// Outgoing mail over SMTP, for every service that sends it (leads forwards inquiries, the portal sends sign-in
// links): one set of SMTP_* variables, one transport, one readiness check.
import { createTransport } from "nodemailer";
import { isEmail } from "@pss/contracts";
import type { EnvReader } from "./config.ts";
import type { ReadinessProbe } from "./health.ts";
import { checkMailHost, type MailPurpose } from "./production-safety.ts";

export interface SmtpConfig {
  host: string;
  port: number;
  /** TLS from the first byte (usually port 465); otherwise STARTTLS when the server offers it. */
  secure: boolean;
  user?: string;
  password?: string;
  /** As configured: "Name <address>" or an address. */
  from: string;
  /** The sender's domain; Message-IDs are <…@domain>. */
  fromDomain: string;
}

/** "Name <address>" or "address" -> the address. */
function senderAddress(from: string): string {
  return (/<([^<>]+)>\s*$/.exec(from)?.[1] ?? from).trim();
}

/**
 * SMTP_HOST, SMTP_PORT, SMTP_SECURE, SMTP_USER, SMTP_PASSWORD, SMTP_FROM (README, "Configuration"). null when
 * SMTP_HOST is unset; problems found are pushed to `problems` (the caller reports them with the others).
 * `purpose` words the production refusal of a missing host or a mail sink.
 */
export function readSmtpConfig(r: EnvReader, problems: string[], purpose?: MailPurpose): SmtpConfig | null {
  const host = r.optionalString("SMTP_HOST");
  const secure = r.bool("SMTP_SECURE", false);
  const port = r.int("SMTP_PORT", secure ? 465 : 587, { min: 1, max: 65535 });
  const user = r.optionalString("SMTP_USER");
  const password = r.optionalString("SMTP_PASSWORD");
  const from = r.optionalString("SMTP_FROM");
  checkMailHost(r, host, purpose);
  if (!host) return null;
  const address = from ? senderAddress(from) : "";
  if (!from)
    problems.push(
      "SMTP_FROM is required when SMTP_HOST is set (the sender of every e-mail: lead forwarding, portal sign-in links)",
    );
  else if (!isEmail(address)) problems.push(`SMTP_FROM must be an address or "Name <address>", got '${from}'`);
  if (user && !password) problems.push("SMTP_PASSWORD is required when SMTP_USER is set");
  return {
    host,
    port,
    secure,
    user,
    password,
    from: from ?? "",
    fromDomain: address.slice(address.lastIndexOf("@") + 1),
  };
}

export function createSmtpTransport(config: SmtpConfig) {
  return createTransport({
    host: config.host,
    port: config.port,
    secure: config.secure,
    auth: config.user ? { user: config.user, pass: config.password ?? "" } : undefined,
    pool: true,
    maxConnections: 3,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    // Messages are built from strings only: never let content make nodemailer read files or URLs.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
}

export type SmtpTransport = ReturnType<typeof createSmtpTransport>;

/**
 * Readiness of the relay: connects and greets (and authenticates when configured). A success is reused
 * for ttlMs so frequent probes do not open a connection each.
 */
export function createSmtpCheck(transport: { verify(): Promise<unknown> }, ttlMs = 30_000): ReadinessProbe {
  let okUntil = 0;
  return async () => {
    if (Date.now() < okUntil) return;
    await transport.verify();
    okUntil = Date.now() + ttlMs;
  };
}
