// One attempt: POST the body to the endpoint's URL through the shared SSRF policy (the host resolved once, every
// address vetted, the connection pinned to the vetted one), bounded as a whole by the timeout (connect, send and
// the receiver's answer). Redirects are not followed. A receiver acknowledges with its status code; of its body only
// the first RESPONSE_EXCERPT_BYTES are read, for the partner's staff (the portal's delivery log), and no longer than
// RESPONSE_EXCERPT_WAIT_MS after the status line (nor past the timeout): the latency stays the status line's.
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { DestinationRefused, hostOf, pinnedLookup, portOf, vetDestination, type Resolver } from "@pss/service-kit";
import { parseRetryAfter } from "./retry-schedule.ts";

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface SendResult {
  /** The receiver's status; null when no answer came. */
  statusCode: number | null;
  /** Why the attempt failed, in words for the partner; null for a 2xx. */
  error: string | null;
  retryAfterMs: number | null;
  latencyMs: number;
  /** The first bytes of the receiver's answer as text; null when no answer came (or it had no body). */
  responseExcerpt: string | null;
}

export const RESPONSE_EXCERPT_BYTES = 512;
const RESPONSE_EXCERPT_WAIT_MS = 1000;

/** Reads up to RESPONSE_EXCERPT_BYTES of the body, until its end, the wait, or `deadline`; then lets go of it. */
function excerptOf(res: IncomingMessage, deadline: number): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = () => {
      clearTimeout(timer);
      res.removeAllListeners("data");
      res.destroy();
      const bytes = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES);
      // Lossy on purpose: a cut multi-byte character or binary bytes become U+FFFD, control characters go.
      const text = bytes.toString("utf8").replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, "");
      resolve(size === 0 ? null : text);
    };
    const timer = setTimeout(finish, Math.max(0, Math.min(RESPONSE_EXCERPT_WAIT_MS, deadline - Date.now())));
    res.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= RESPONSE_EXCERPT_BYTES) finish();
    });
    res.on("end", finish);
    res.on("error", finish);
  });
}

export interface Sender {
  send(request: SendRequest): Promise<SendResult>;
}

const USER_AGENT = "pss-webhooks/1.0 (+Standard Webhooks)";

class AttemptFailure extends Error {}

function describeFailure(err: unknown, timeoutMs: number): string {
  if (err instanceof AttemptFailure) return err.message;
  if (err instanceof DestinationRefused)
    return err.reason === "address not allowed"
      ? "address not allowed (a private, loopback or reserved network)"
      : "host not found";
  const code = String((err as { code?: unknown })?.code ?? "");
  if (code === "ENOTFOUND" || code === "ENODATA") return "host not found";
  if (code === "EAI_AGAIN") return "DNS lookup failed";
  if (code === "ECONNREFUSED") return "connection refused";
  if (code === "ECONNRESET" || code === "EPIPE") return "connection reset";
  if (code === "ETIMEDOUT") return `timed out after ${timeoutMs} ms`;
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH") return "host unreachable";
  if (/CERT|SSL|TLS|ALTNAME|SELF_SIGNED/i.test(code) || /certificate|altnames/i.test(String((err as Error)?.message)))
    return `TLS handshake failed${code ? ` (${code})` : ""}`;
  return `request failed${code ? ` (${code})` : ""}`;
}

/** Rejects with a timeout when `promise` has not settled by `deadline`. */
async function before<T>(deadline: number, promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: Timer | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new AttemptFailure(`timed out after ${timeoutMs} ms`)),
          Math.max(0, deadline - Date.now()),
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export function createSender(opts: { timeoutMs: number; allowedHosts: readonly string[]; resolve?: Resolver }): Sender {
  const { timeoutMs, allowedHosts } = opts;

  function post(
    url: URL,
    target: Awaited<ReturnType<typeof vetDestination>>,
    request: SendRequest,
    deadline: number,
  ): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const client = url.protocol === "https:" ? https : http;
      const req = client.request({
        protocol: url.protocol,
        hostname: hostOf(url),
        port: portOf(url),
        path: `${url.pathname}${url.search}`,
        method: "POST",
        lookup: pinnedLookup(target),
        headers: {
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(request.body)),
          "user-agent": USER_AGENT,
          ...request.headers,
        },
        agent: false,
      });
      const timer = setTimeout(
        () => req.destroy(new AttemptFailure(`timed out after ${timeoutMs} ms`)),
        Math.max(0, deadline - Date.now()),
      );
      req.on("response", (res) => {
        clearTimeout(timer);
        // The body is read by excerptOf (its first bytes); the connection is not reused (agent: false).
        resolve(res);
      });
      req.on("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
      req.end(request.body);
    });
  }

  return {
    async send(request) {
      const started = performance.now();
      const deadline = Date.now() + timeoutMs;
      const latency = () => Math.round(performance.now() - started);
      try {
        let url: URL;
        try {
          url = new URL(request.url);
        } catch {
          throw new AttemptFailure("the endpoint URL is not valid");
        }
        if (url.protocol !== "http:" && url.protocol !== "https:") throw new AttemptFailure("unsupported URL scheme");
        const target = await before(deadline, vetDestination(url, { allowedHosts, resolve: opts.resolve }), timeoutMs);
        const res = await post(url, target, request, deadline);
        const latencyMs = latency();
        const responseExcerpt = await excerptOf(res, deadline);
        const status = res.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        const error = ok
          ? null
          : status >= 300 && status < 400
            ? `HTTP ${status} (redirects are not followed)`
            : `HTTP ${status}`;
        const retryAfter = res.headers["retry-after"];
        return {
          statusCode: status,
          error,
          retryAfterMs: ok ? null : parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, Date.now()),
          latencyMs,
          responseExcerpt,
        };
      } catch (err) {
        return {
          statusCode: null,
          error: describeFailure(err, timeoutMs),
          retryAfterMs: null,
          latencyMs: latency(),
          responseExcerpt: null,
        };
      }
    },
  };
}
