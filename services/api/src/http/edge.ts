// Checks every request passes before routing: limits on the request target and headers, methods this API
// implements, and request targets without a host. The runtime is started with a larger header limit
// (BUN_OPTIONS=--max-http-header-size, see docs/api-internals.md) so these answers are ours, in JSON.
import { ErrorMessages } from "@pss/contracts";
import {
  HeadersTooLargeError,
  NotImplementedError,
  PayloadTooLargeError,
  UriTooLongError,
  type ApiError,
} from "./errors.ts";

export const EDGE_LIMITS = {
  /** Path plus query string, in bytes. */
  maxTargetBytes: 8_192,
  /** Every header name and value together. */
  maxHeaderBytes: 16_384,
} as const;

/** The runtime's own header limit the API process is started with; beyond it the runtime answers alone. */
export const RUNTIME_HEADER_LIMIT_BYTES = 1_048_576;
export const RUNTIME_BUN_OPTIONS = `--max-http-header-size=${RUNTIME_HEADER_LIMIT_BYTES}`;

/** RFC 9110's methods, PATCH and QUERY (the IETF safe method with a body): routed, so a known path answers 405 with Allow. Anything else is 501. */
const STANDARD_METHODS = new Set([
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "PATCH",
  "DELETE",
  "OPTIONS",
  "TRACE",
  "CONNECT",
  "QUERY",
]);

/** Offset of the path in a request URL: absolute ("http://h/p") or origin-form ("/p", sent without Host). */
function pathStart(url: string): number {
  if (url.charCodeAt(0) === 47) return 0;
  const start = url.indexOf("/", url.indexOf("//") + 2);
  return start < 0 ? url.length : start;
}

/** The path of a request URL without building a URL object (this runs on every request). */
export function pathOf(url: string): string {
  const start = pathStart(url);
  if (start >= url.length) return "/";
  const query = url.indexOf("?", start);
  return query < 0 ? url.slice(start) : url.slice(start, query);
}

/**
 * A request the runtime passed on without a Host header has an origin-form URL, and the router finds the path
 * only after the 11th character (it expects at least "http://xxxx/"): a very short Host such as "api" would
 * be routed to the wrong path. Both get an absolute URL the router reads correctly; null when it already is.
 */
export function withAbsoluteUrl(request: Request): Request | null {
  const start = pathStart(request.url);
  if (start >= 11) return null;
  return new Request(`http://localhost${request.url.slice(start)}`, request);
}

/** The first limit a request breaks, or null. */
export function edgeViolation(request: Request, maxBodyBytes: number): ApiError | null {
  if (!STANDARD_METHODS.has(request.method)) return new NotImplementedError(request.method);
  const url = request.url;
  if (url.length - pathStart(url) > EDGE_LIMITS.maxTargetBytes) return new UriTooLongError(EDGE_LIMITS.maxTargetBytes);
  let headerBytes = 0;
  request.headers.forEach((value, name) => {
    headerBytes += name.length + value.length + 4;
  });
  if (headerBytes > EDGE_LIMITS.maxHeaderBytes) return new HeadersTooLargeError(EDGE_LIMITS.maxHeaderBytes);
  const length = request.headers.get("content-length");
  if (length !== null && Number(length) > maxBodyBytes) return new PayloadTooLargeError(maxBodyBytes);
  return null;
}

/**
 * Options for the runtime's server: production mode (no development error pages), no body limit of its own
 * (ours answers 413 in JSON, measured while reading), and a last-resort JSON answer for anything that
 * escapes the application.
 */
export function serverOptions(onUnexpected: (err: unknown) => void) {
  return {
    development: false,
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    error(err: unknown) {
      onUnexpected(err);
      return new Response(JSON.stringify({ status: "error", error: ErrorMessages.internal }), {
        status: 500,
        headers: { "content-type": "application/json" },
      });
    },
  };
}
