// What NODE_ENV=production refuses at boot (docs/operations.md, "Production checklist"): settings that are fine on a
// developer's machine and silently wrong for real partners and buyers. Each is one clear line in the boot error.
// Development (anything but NODE_ENV=production: `npm start`, the compose file's default profile) keeps its
// conveniences: loopback links, the mail sink, the well-known local credentials, allowlists and limits turned off.
//
// Two kinds of refusal, one convention (docs/operations.md, "Overrides"):
// - a development default (a loopback public URL, a mail sink, a published credential) is refused outright: no
//   production needs one, so nothing overrides it; each check compares what the value MEANS (the address after
//   normalisation, the key's bytes, every DNS label), never only its spelling;
// - a setting that switches a protection off (an allowlist exempting hosts from the private-address check, a limit
//   at 0) is refused unless `<VARIABLE>_I_UNDERSTAND=true` is set beside it (refuseUnlessUnderstood); then the
//   service boots and logs one warning line per accepted override.
import { isLocalOnlyAddress } from "./address-policy.ts";
import type { EnvReader } from "./config.ts";
import { parseSecretKey } from "./secret-box.ts";

/** Credentials shipped in this repository for local use: never acceptable with NODE_ENV=production. */
export const DEVELOPMENT_PASSWORDS: readonly string[] = ["pss", "postgres", "password"];
export const DEVELOPMENT_S3_SECRETS: readonly string[] = ["pss-compose-secret", "pss-local-secret"];
/** The tests' webhook key (test/support/env.ts): public, so it protects nothing, in whatever encoding it is given. */
export const DEVELOPMENT_WEBHOOK_KEYS: readonly string[] = ["dGVzdC1vbmx5LXdlYmhvb2stc2VjcmV0cy1rZXktMzI="];
/**
 * Mail sinks that accept and keep every message: SMTP_HOST naming one (as any DNS label, or a hyphenated part of
 * one, such as the chart's `<release>-smtp-sink` Service or `<release>-mailpit-smtp`) means no broker is reached.
 */
export const MAIL_SINK_HOSTS: readonly string[] = ["smtp-sink", "mailhog", "mailpit", "maildev", "smtp4dev"];
/** Host names that always mean this machine (besides `localhost` and `*.localhost`; Debian's /etc/hosts). */
const LOCAL_HOST_NAMES: readonly string[] = ["localhost", "ip6-localhost", "ip6-loopback", "localhost.localdomain"];

/** The variable that accepts, with NODE_ENV=production, what `variable` switches off. */
export function overrideVariable(variable: string): string {
  return `${variable}_I_UNDERSTAND`;
}

export function isProduction(r: EnvReader): boolean {
  return r.optionalString("NODE_ENV") === "production";
}

/**
 * The host as an HTTP URL has it: IPv4 shorthands (`127.1`, `2130706433`, `0x7f.1`) become dotted quads and IPv6
 * literals their compressed form (`[::ffff:127.0.0.1]` is `[::ffff:7f00:1]`); lower case, no trailing dot.
 */
function normaliseHost(hostname: string): string {
  const bare = hostname.trim().replace(/^\[|\]$/g, "");
  let host = bare;
  try {
    host = new URL(`http://${bare.includes(":") ? `[${bare}]` : bare}/`).hostname;
  } catch {
    // not a host a URL can hold: judged as written
  }
  return host
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
}

/**
 * A host only this machine reaches: localhost names, 127.0.0.0/8, ::1, the unspecified addresses, and any of
 * those IPv4 addresses mapped into IPv6, in every notation (normalised first, then judged as an address).
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = normaliseHost(hostname);
  return LOCAL_HOST_NAMES.includes(host) || host.endsWith(".localhost") || isLocalOnlyAddress(host);
}

/** SMTP_HOST names a mail sink: one of its DNS labels is a sink's name, alone or as a hyphenated part. */
export function isMailSinkHost(smtpHost: string): boolean {
  return normaliseHost(smtpHost)
    .split(".")
    .some((label) => MAIL_SINK_HOSTS.some((sink) => `-${label}-`.includes(`-${sink}-`)));
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

/**
 * DATABASE_URL under production: not one of the repository's local passwords, neither in the URL nor in
 * PGPASSWORD, which the PostgreSQL client (postgres.js) uses when the URL holds none.
 */
export function checkDatabaseUrl(r: EnvReader, url: string): void {
  if (!isProduction(r)) return;
  let password: string;
  try {
    password = decodeURIComponent(new URL(url).password);
  } catch {
    return; // its reader reports a URL that does not parse
  }
  const through = password === "" ? " through PGPASSWORD (the URL holds none)" : "";
  if (password === "") password = r.optionalString("PGPASSWORD") ?? "";
  if (DEVELOPMENT_PASSWORDS.includes(password))
    r.problem(
      `DATABASE_URL uses a development password${through} with NODE_ENV=production (the repository's local default): give the database user its own secret`,
    );
}

/**
 * A credential about to cross the network without TLS, under production: `variable` is the setting that leaves TLS
 * out (shown as `variable=shown`, never with a secret), `what` names the credential, `fix` says how to add TLS.
 * Refused when any of `hosts` is reachable from elsewhere than this machine, unless `<variable>_I_UNDERSTAND=true`
 * states that network is trusted (a private link, a mesh that encrypts): then accepted and logged at boot.
 */
export function checkPlaintextCredential(
  r: EnvReader,
  check: { variable: string; shown: string; what: string; fix: string; hosts: string[] },
): void {
  if (!isProduction(r)) return;
  const remote = check.hosts.filter((h) => !isLoopbackHost(h));
  if (remote.length === 0) return;
  const override = overrideVariable(check.variable);
  const line = `${check.variable}=${check.shown} sends ${check.what} in plaintext to ${remote.join(", ")}`;
  if (r.bool(override, false)) r.accept(`${line} (accepted by ${override}=true)`);
  else
    r.problem(
      `${line}, refused with NODE_ENV=production: ${check.fix} (docs/operations.md, "Connecting to managed servers"), or set ${override}=true if that network is trusted`,
    );
}

/** A secret under production: not one published in this repository. */
export function checkSecret(r: EnvReader, name: string, value: string | undefined, known: readonly string[]): void {
  if (isProduction(r) && value !== undefined && known.includes(value.trim()))
    r.problem(
      `${name} is a development default published in this repository, refused with NODE_ENV=production: generate your own`,
    );
}

/** A 32-byte key under production: not one published in this repository, compared as bytes (any encoding). */
export function checkSecretKey(r: EnvReader, name: string, key: Buffer, known: readonly string[]): void {
  if (isProduction(r) && known.some((k) => parseSecretKey(k)?.equals(key) === true))
    r.problem(
      `${name} is a development default published in this repository, refused with NODE_ENV=production: generate your own (\`openssl rand -base64 32\`)`,
    );
}

/** What a service's mail is for, in the sentences checkMailHost says when it refuses (the leads service's by default). */
export interface MailPurpose {
  /** Completes "without it …". */
  withoutIt: string;
  /** Completes "refused with NODE_ENV=production: …". */
  sinkMeans: string;
}

export const LEAD_MAIL: MailPurpose = {
  withoutIt: "no lead is e-mailed to its broker (leads would wait as pending)",
  sinkMeans: "buyers' inquiries would never reach brokers",
};

/** Where a service's e-mails go under production: somewhere real (a broker's inbox, through your relay). */
export function checkMailHost(r: EnvReader, smtpHost: string | undefined, purpose: MailPurpose = LEAD_MAIL): void {
  if (!isProduction(r)) return;
  if (smtpHost === undefined)
    r.problem(`SMTP_HOST is required with NODE_ENV=production: without it ${purpose.withoutIt}`);
  else if (isMailSinkHost(smtpHost))
    r.problem(
      `SMTP_HOST=${smtpHost} is a development mail sink, refused with NODE_ENV=production: ${purpose.sinkMeans}; set your mail relay`,
    );
}

/**
 * A setting that switches a protection off (`variable` shown as `variable=shown`; `what` completes the sentence,
 * saying what is off and for whom): refused with NODE_ENV=production unless `<variable>_I_UNDERSTAND=true`; then
 * accepted, and the service logs it at boot (EnvReader.accepted()). Outside production: nothing to say.
 */
export function refuseUnlessUnderstood(r: EnvReader, variable: string, shown: string, what: string): void {
  if (!isProduction(r)) return;
  const override = overrideVariable(variable);
  if (r.bool(override, false)) r.accept(`${variable}=${shown} ${what} (accepted by ${override}=true)`);
  else
    r.problem(
      `${variable}=${shown} ${what}, refused with NODE_ENV=production: unset it, or set ${override}=true to run so on purpose`,
    );
}

/** Copies of every Kafka partition production wants: a broker may be lost (or restarted) without losing events. */
export const PRODUCTION_REPLICATION_FACTOR = 3;

/**
 * KAFKA_REPLICATION_FACTOR under production: at least 3 (its default there), or fewer only with
 * KAFKA_REPLICATION_FACTOR_I_UNDERSTAND=true (a cluster of fewer brokers, on purpose), logged at boot; the cluster's
 * broker count is stated at boot when the topics are checked (kafka.ts, ensureTopics).
 */
export function checkReplicationFactor(r: EnvReader, replicationFactor: number): void {
  if (replicationFactor >= PRODUCTION_REPLICATION_FACTOR) return;
  refuseUnlessUnderstood(
    r,
    "KAFKA_REPLICATION_FACTOR",
    String(replicationFactor),
    `keeps fewer than ${PRODUCTION_REPLICATION_FACTOR} copies of every event (a lost broker loses acknowledged events)`,
  );
}

/** The one line a service logs at boot outside production, so nobody mistakes a development stack for a real one. */
export function developmentProfileNotice(r: EnvReader): string | null {
  return isProduction(r)
    ? null
    : `development profile (NODE_ENV=${r.optionalString("NODE_ENV") ?? "unset"}): loopback links, the mail sink and the repository's local credentials are accepted; set NODE_ENV=production for real partners and buyers (docs/operations.md, "Production checklist")`;
}
