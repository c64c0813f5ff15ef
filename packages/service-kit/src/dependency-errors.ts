// Tells "a dependency is unreachable right now" apart from every other failure, so callers can answer 503 and
// retry later instead of 500. Pure: it only reads the error's code and message.

/** Socket-level codes (Node/Bun) and postgres-client codes meaning the server could not be reached or went away. */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
  "CONNECT_TIMEOUT",
]);

/** SQLSTATEs for a server that is shutting down, starting up, or out of connections. */
const UNAVAILABLE_SQLSTATES = new Set([
  "57P01",
  "57P02",
  "57P03",
  "53300",
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
]);

export function isDependencyUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== "object" || depth > 3) return false;
  const e = err as { code?: unknown; errno?: unknown; cause?: unknown; name?: unknown };
  const code = typeof e.code === "string" ? e.code : typeof e.errno === "string" ? e.errno : "";
  if (CONNECTION_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code)) return true;
  // Redis with the offline queue off, and the OpenSearch client, say it in their error names.
  if (e.name === "ConnectionError" || e.name === "TimeoutError" || e.name === "NoLivingConnectionsError") return true;
  if (err instanceof Error && /^(Connection is closed|Stream isn't writeable)/.test(err.message)) return true;
  return isDependencyUnavailable(e.cause, depth + 1);
}

/**
 * A failure that waiting does not cure: the server refused our credentials, or we refused its certificate (or
 * the two sides disagree on TLS). It is a configuration problem on one side or the other, and an operator must act;
 * null for anything else (an outage, a timeout).
 */
export type ConnectionProblem = "authentication failed" | "certificate not trusted" | "TLS mismatch";

const AUTH_SQLSTATES = new Set(["28P01", "28000"]);
const CERTIFICATE_CODES = /^(UNABLE_TO_|SELF_SIGNED_CERT|DEPTH_ZERO_SELF_SIGNED|CERT_|ERR_TLS_CERT|HOSTNAME_MISMATCH)/;
const CERTIFICATE_MESSAGES =
  /unable to verify|self[- ]signed certificate|certificate has expired|does not match certificate|not in the cert's|unable to get (local )?issuer/i;

export function connectionProblem(err: unknown, depth = 0): ConnectionProblem | null {
  if (!err || typeof err !== "object" || depth > 3) return null;
  const e = err as { code?: unknown; name?: unknown; message?: unknown; statusCode?: unknown; cause?: unknown };
  const code = typeof e.code === "string" ? e.code : "";
  const message = typeof e.message === "string" ? e.message : "";
  if (
    AUTH_SQLSTATES.has(code) ||
    e.name === "KafkaJSSASLAuthenticationError" ||
    /^(WRONGPASS|NOAUTH)\b/.test(message) ||
    /SASL .*authentication failed|password authentication failed/i.test(message) ||
    e.statusCode === 401
  )
    return "authentication failed";
  if (CERTIFICATE_CODES.test(code) || CERTIFICATE_MESSAGES.test(message)) return "certificate not trusted";
  if (/wrong version number|does not support SSL|packet length too long|SSL routines/i.test(message))
    return "TLS mismatch";
  return connectionProblem(e.cause, depth + 1);
}
