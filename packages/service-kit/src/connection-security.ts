// How each server connection is secured, read from the environment (README, "Configuration"; docs/operations.md,
// "Connecting to managed servers"): TLS with an optional private CA and client certificate for all four servers,
// PostgreSQL's libpq `sslmode` in DATABASE_URL, Redis and OpenSearch user names and passwords (from the URL or a
// variable of their own, so the URL can sit in a ConfigMap and the password in a Secret), and Kafka's SASL.
import type { EnvReader } from "./config.ts";
import { checkPlaintextCredential } from "./production-safety.ts";
import { hasTlsFiles, readTlsFiles, type TlsFiles } from "./tls-files.ts";

export const POSTGRES_SSL_MODES = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"] as const;
export type PostgresSslMode = (typeof POSTGRES_SSL_MODES)[number];

/** libpq's connection parameters for TLS that we read from DATABASE_URL and take out of it. */
const URL_TLS_PARAMS = { sslrootcert: "caFile", sslcert: "certFile", sslkey: "keyFile" } as const;

export interface PostgresTls {
  /** DATABASE_URL's sslmode; absent: no TLS (the client's default). */
  mode: PostgresSslMode | null;
  files: TlsFiles;
  /** `sslrootcert=system`: verify against the system's CAs (libpq's spelling). */
  systemRoots: boolean;
}

/**
 * DATABASE_URL's TLS parameters (sslmode, sslrootcert, sslcert, sslkey; DATABASE_TLS_*_FILE win over the last
 * three), and the URL without them: the client would otherwise send them to the server as run-time settings.
 */
export function readPostgresTls(r: EnvReader, rawUrl: string): { url: string; tls: PostgresTls } {
  const tls: PostgresTls = { mode: null, files: {}, systemRoots: false };
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return { url: rawUrl, tls }; // its reader reports a URL that does not parse
  }
  const mode = url.searchParams.get("sslmode");
  if (mode !== null) {
    if ((POSTGRES_SSL_MODES as readonly string[]).includes(mode)) tls.mode = mode as PostgresSslMode;
    else r.problem(`DATABASE_URL's sslmode must be one of ${POSTGRES_SSL_MODES.join(", ")}, got '${mode}'`);
  }
  const fromUrl: TlsFiles = {};
  for (const [param, field] of Object.entries(URL_TLS_PARAMS)) {
    const value = url.searchParams.get(param);
    if (value === "system" && param === "sslrootcert") tls.systemRoots = true;
    else if (value) fromUrl[field] = value;
  }
  const fromEnv = readTlsFiles(r, "DATABASE");
  tls.files = { ...fromUrl, ...fromEnv };
  const taken = ["sslmode", ...Object.keys(URL_TLS_PARAMS)].filter((p) => url.searchParams.has(p));
  for (const param of taken) url.searchParams.delete(param);
  if (tls.systemRoots && tls.mode === null) tls.mode = "verify-full";
  if (hasTlsFiles(tls.files) && (tls.mode === null || tls.mode === "disable"))
    r.problem(
      `DATABASE_URL has ${tls.mode === null ? "no sslmode" : "sslmode=disable"} but TLS files are given (DATABASE_TLS_*_FILE or sslrootcert/sslcert/sslkey): add ?sslmode=verify-full`,
    );
  return { url: taken.length > 0 ? url.toString() : rawUrl, tls };
}

export interface UserPassword {
  username?: string;
  password?: string;
}

/**
 * A URL's user name and password, overridden by `<PREFIX>_USERNAME` / `<PREFIX>_PASSWORD`, and the URL without
 * them (the client is given them as options, so no log line or error message built from the URL can carry them).
 */
export function splitCredentials(r: EnvReader, prefix: string, rawUrl: string): { url: string } & UserPassword {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return { url: rawUrl };
  }
  const username = r.optionalString(`${prefix}_USERNAME`) ?? (url.username ? decodeURIComponent(url.username) : "");
  const password = r.optionalString(`${prefix}_PASSWORD`) ?? (url.password ? decodeURIComponent(url.password) : "");
  const credentials = { ...(username ? { username } : {}), ...(password ? { password } : {}) };
  if (!url.username && !url.password) return { url: rawUrl, ...credentials };
  url.username = "";
  url.password = "";
  return { url: url.toString(), ...credentials };
}

/** A URL-addressed server's credentials and TLS: Redis (`rediss://`), OpenSearch (`https://`). */
export interface UrlSecurity extends UserPassword {
  /** The TLS scheme: the TLS files (empty: the system's CAs); null: plaintext. */
  tls: TlsFiles | null;
}
export type RedisSecurity = UrlSecurity;
export type OpenSearchSecurity = UrlSecurity;

/**
 * `<PREFIX>_URL` with its credentials taken out (`<PREFIX>_USERNAME`/`_PASSWORD` win), its TLS files, and the
 * production check of a password sent without TLS.
 */
function readUrlSecurity(
  r: EnvReader,
  rawUrl: string,
  server: { prefix: string; name: string; tlsScheme: string; plainScheme: string },
): { url: string } & UrlSecurity {
  const { prefix, name, tlsScheme, plainScheme } = server;
  const { url, ...credentials } = splitCredentials(r, prefix, rawUrl);
  const files = readTlsFiles(r, prefix);
  const secure = url.startsWith(`${tlsScheme}:`);
  if (!secure && hasTlsFiles(files))
    r.problem(`${prefix}_TLS_*_FILE are set but ${prefix}_URL is ${plainScheme}://: use ${tlsScheme}://`);
  if (credentials.password && !secure)
    checkPlaintextCredential(r, {
      variable: `${prefix}_URL`,
      shown: url,
      what: `the ${name} password`,
      fix: `use ${tlsScheme}:// (${prefix}_TLS_CA_FILE for a private CA)`,
      hosts: hostsOf(url),
    });
  return { url, ...credentials, tls: secure ? files : null };
}

export function readRedisSecurity(r: EnvReader, rawUrl: string): { url: string } & RedisSecurity {
  return readUrlSecurity(r, rawUrl, { prefix: "REDIS", name: "Redis", tlsScheme: "rediss", plainScheme: "redis" });
}

export function readOpenSearchSecurity(r: EnvReader, rawUrl: string): { url: string } & OpenSearchSecurity {
  const security = readUrlSecurity(r, rawUrl, {
    prefix: "OPENSEARCH",
    name: "OpenSearch",
    tlsScheme: "https",
    plainScheme: "http",
  });
  if (Boolean(security.username) !== Boolean(security.password))
    r.problem(
      "OpenSearch basic authentication needs both a user name and a password (OPENSEARCH_USERNAME, OPENSEARCH_PASSWORD)",
    );
  return security;
}

export const KAFKA_SASL_MECHANISMS = ["plain", "scram-sha-256", "scram-sha-512"] as const;
export type KafkaSaslMechanism = (typeof KAFKA_SASL_MECHANISMS)[number];

export interface KafkaSecurity {
  /** TLS to every broker: the files (empty: the system's CAs); null: plaintext. */
  tls: TlsFiles | null;
  sasl: { mechanism: KafkaSaslMechanism; username: string; password: string } | null;
}

export function readKafkaSecurity(r: EnvReader, brokers: string[]): KafkaSecurity {
  const files = readTlsFiles(r, "KAFKA");
  // TLS files alone mean TLS: nobody gives a CA bundle for a plaintext listener.
  const secure = r.bool("KAFKA_TLS", hasTlsFiles(files));
  if (!secure && hasTlsFiles(files)) r.problem("KAFKA_TLS=false but KAFKA_TLS_*_FILE are set");
  const mechanism = r.oneOf("KAFKA_SASL_MECHANISM", ["none", ...KAFKA_SASL_MECHANISMS] as const, "none");
  let sasl: KafkaSecurity["sasl"] = null;
  if (mechanism !== "none") {
    sasl = { mechanism, username: r.string("KAFKA_SASL_USERNAME"), password: r.string("KAFKA_SASL_PASSWORD") };
    if (!secure)
      checkPlaintextCredential(r, {
        variable: "KAFKA_TLS",
        shown: "false",
        what: `the Kafka SASL credentials (${mechanism})`,
        fix: "set KAFKA_TLS=true (KAFKA_TLS_CA_FILE for a private CA) and the brokers' TLS listener",
        hosts: brokers.map((b) => b.replace(/:\d+$/, "")),
      });
  }
  return { tls: secure ? files : null, sasl };
}

function hostsOf(url: string): string[] {
  try {
    return [new URL(url).hostname];
  } catch {
    return [];
  }
}
