// Typed errors: every failed call throws one of these, never a bare Response or a parsed body.

export interface ErrorDetail {
  path: string;
  message: string;
}

/** Base class: `instanceof PssError` catches everything the SDK throws about a call. */
export class PssError extends Error {
  override name = "PssError";
}

/**
 * The API answered with an error status. `error` is the API's sentence (for a 400, "<field path>: <problem>"),
 * `details` every problem it found, `requestId` the X-Request-Id to quote when reporting a problem.
 */
export class PssApiError extends PssError {
  override name = "PssApiError";
  constructor(
    readonly status: number,
    readonly error: string,
    readonly details: ErrorDetail[],
    readonly requestId: string | null,
    /** Seconds the API asked to wait (429, 503), if it said. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(`${status} ${error}${requestId ? ` (request ${requestId})` : ""}`);
  }

  /** Built from an error response and its already-parsed body (whatever shape it has). */
  static from(response: Response, body: unknown): PssApiError {
    const b = body && typeof body === "object" ? (body as Record<string, unknown>) : {};
    const error =
      typeof b.error === "string"
        ? b.error
        : typeof body === "string" && body
          ? body.slice(0, 500)
          : `HTTP ${response.status}`;
    const details = Array.isArray(b.details)
      ? b.details.filter(
          (d): d is ErrorDetail =>
            !!d && typeof d === "object" && typeof d.path === "string" && typeof d.message === "string",
        )
      : [];
    const requestId = typeof b.requestId === "string" ? b.requestId : response.headers.get("x-request-id");
    return new PssApiError(
      response.status,
      error,
      details,
      requestId,
      parseRetryAfter(response.headers.get("retry-after")),
    );
  }
}

/** No answer at all (connection refused or reset, DNS, timeout) after every retry. */
export class PssNetworkError extends PssError {
  override name = "PssNetworkError";
  /** Mirrors PssApiError so a caller can read `status` on any PssError-like value: 0 means no HTTP answer. */
  readonly status = 0;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Retry-After as seconds: a number of seconds or an HTTP date (RFC 9110); null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}
