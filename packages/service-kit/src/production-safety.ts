// What NODE_ENV=production refuses at boot (docs/operations.md, "Production checklist"): settings that are fine on a
// developer's machine and silently wrong for real partners and buyers. Each is one clear line in the boot error.
// Development (anything but NODE_ENV=production: `npm start`, the compose file's default profile) keeps its
// conveniences: loopback links, the mail sink, the well-known local credentials.
import type { EnvReader } from "./config.ts";

/** Credentials shipped in this repository for local use: never acceptable with NODE_ENV=production. */
export const DEVELOPMENT_PASSWORDS: readonly string[] = ["pss", "postgres", "password"];
export const DEVELOPMENT_S3_SECRETS: readonly string[] = ["pss-compose-secret", "pss-local-secret"];
/** The tests' webhook key (test/support/env.ts): public, so it protects nothing. */
export const DEVELOPMENT_WEBHOOK_KEYS: readonly string[] = ["dGVzdC1vbmx5LXdlYmhvb2stc2VjcmV0cy1rZXktMzI="];
/** Mail sinks that accept and keep every message: SMTP_HOST naming one means no broker is ever reached. */
export const MAIL_SINK_HOSTS: readonly string[] = ["smtp-sink", "mailhog", "mailpit", "maildev", "smtp4dev"];

export function isProduction(r: EnvReader): boolean {
  return r.optionalString("NODE_ENV") === "production";
}

/** A host only this machine reaches: localhost names, 127.0.0.0/8, ::1, and the unspecified addresses. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  return (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) ||
    host === "::1" ||
    host === "0:0:0:0:0:0:0:1" ||
    host === "0.0.0.0" ||
    host === "::" ||
    host === "::ffff:127.0.0.1"
  );
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}

/** PUBLIC_BASE_URL under production: present (checked by its reader) and not an address only this host reaches. */
export function checkPublicBaseUrl(r: EnvReader, url: string | undefined): void {
  if (!isProduction(r) || url === undefined) return;
  const host = hostOf(url);
  if (host !== undefined && isLoopbackHost(host))
    r.problem(
      `PUBLIC_BASE_URL is a loopback address (${url}) with NODE_ENV=production: buyers and partners would get links that do not work; set the public address, e.g. https://market.example.com`,
    );
}

/** DATABASE_URL under production: not one of the repository's local passwords. */
export function checkDatabaseUrl(r: EnvReader, url: string): void {
  if (!isProduction(r)) return;
  let password: string;
  try {
    password = decodeURIComponent(new URL(url).password);
  } catch {
    return; // its reader reports a URL that does not parse
  }
  if (DEVELOPMENT_PASSWORDS.includes(password))
    r.problem(
      "DATABASE_URL uses a development password with NODE_ENV=production (the repository's local default): give the database user its own secret",
    );
}

/**
 * The explicit override of checkPlaintextCredential: the operator states that the network between the services and
 * the named servers is trusted (a private VPC link, a service mesh that encrypts), so credentials may cross it in
 * plaintext.
 */
export const PLAINTEXT_CREDENTIALS_OVERRIDE = "ALLOW_PLAINTEXT_CREDENTIALS_I_UNDERSTAND";

/**
 * A credential about to be sent without TLS, under production: refused when any of `hosts` is reachable from
 * elsewhere than this machine (anyone on the path could read it), unless PLAINTEXT_CREDENTIALS_OVERRIDE is true.
 */
export function checkPlaintextCredential(r: EnvReader, variable: string, what: string, hosts: string[]): void {
  if (!isProduction(r)) return;
  const remote = hosts.filter((h) => !isLoopbackHost(h));
  if (remote.length === 0) return;
  if (r.bool(PLAINTEXT_CREDENTIALS_OVERRIDE, false)) return;
  r.problem(
    `${variable}: ${what} would cross the network in plaintext to ${remote.join(", ")} with NODE_ENV=production: enable TLS (docs/operations.md, "Connecting to managed servers"), or set ${PLAINTEXT_CREDENTIALS_OVERRIDE}=true if that network is trusted`,
  );
}

/** A secret under production: not one published in this repository. */
export function checkSecret(r: EnvReader, name: string, value: string | undefined, known: readonly string[]): void {
  if (isProduction(r) && value !== undefined && known.includes(value.trim()))
    r.problem(
      `${name} is a development default published in this repository, refused with NODE_ENV=production: generate your own`,
    );
}

/** Where lead e-mails go under production: somewhere real (a broker's inbox, through your relay). */
export function checkMailHost(r: EnvReader, smtpHost: string | undefined): void {
  if (!isProduction(r)) return;
  if (smtpHost === undefined)
    r.problem(
      "SMTP_HOST is required with NODE_ENV=production: without it no lead is e-mailed to its broker (leads would wait as pending)",
    );
  else if (MAIL_SINK_HOSTS.includes(smtpHost.toLowerCase()))
    r.problem(
      `SMTP_HOST=${smtpHost} is a development mail sink, refused with NODE_ENV=production: buyers' inquiries would never reach brokers; set your mail relay`,
    );
}

/** The one line a service logs at boot outside production, so nobody mistakes a development stack for a real one. */
export function developmentProfileNotice(r: EnvReader): string | null {
  return isProduction(r)
    ? null
    : `development profile (NODE_ENV=${r.optionalString("NODE_ENV") ?? "unset"}): loopback links, the mail sink and the repository's local credentials are accepted; set NODE_ENV=production for real partners and buyers (docs/operations.md, "Production checklist")`;
}
