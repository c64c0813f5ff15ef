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
