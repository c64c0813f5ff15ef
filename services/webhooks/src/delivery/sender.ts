// One attempt: POST the body to the endpoint's URL through the shared SSRF policy (the host resolved once, every
// address vetted, the connection pinned to the vetted one), bounded as a whole by the timeout (connect, send and
// the receiver's answer). Redirects are not followed. Only the status line and headers are awaited: a receiver
// acknowledges with its status code, its body is not read.
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
        resolve(res);
        // The answer's body is not needed; the connection is not reused (agent: false).
        res.destroy();
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
          latencyMs: latency(),
        };
      } catch (err) {
        return { statusCode: null, error: describeFailure(err, timeoutMs), retryAfterMs: null, latencyMs: latency() };
      }
    },
  };
}
