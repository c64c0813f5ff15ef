// The nodemailer SMTP transport and its readiness check.
import { createTransport } from "nodemailer";
import type { ReadinessProbe } from "@pss/service-kit";

export interface SmtpConfig {
  host: string;
  port: number;
  /** TLS from the first byte (usually port 465); otherwise STARTTLS when the server offers it. */
  secure: boolean;
  user?: string;
  password?: string;
  /** As configured: "Name <address>" or an address. */
  from: string;
  /** The sender's domain; Message-IDs are <lead-{leadId}@domain>. */
  fromDomain: string;
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
