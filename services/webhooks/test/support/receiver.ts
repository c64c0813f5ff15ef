// A partner's webhook receiver on loopback: records every request (headers, exact body) and answers what the
// test scripted for its path (status, headers such as Retry-After, and an optional delay to provoke timeouts).
// Signatures are checked by the tests with the standardwebhooks package, as a partner would.
import { Webhook } from "standardwebhooks";

export interface ReceivedRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
  receivedAt: number;
  /** The status this request was answered with. */
  status: number;
  /** The request's 1-based number among those to its path. */
  nth: number;
  /** When its answer was sent (undefined while it is held). */
  answeredAt?: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  /** Answer only after this long (a receiver slower than the sender's timeout). */
  delayMs?: number;
  /** The answer's body (default: none for a 204, "{}" otherwise). */
  body?: string;
}

export type Script = (nth: number, request: ReceivedRequest) => Reply;

export interface Receiver {
  port: number;
  /** host:port, for WEBHOOK_ALLOWED_HOSTS. */
  hostPort: string;
  url(path: string): string;
  /** Answer requests to `path` with what `script` says (default: 204). */
  script(path: string, script: Script): void;
  requests(path?: string): ReceivedRequest[];
  /** Requests being held (delayed) right now. */
  holding(): number;
  stop(): void;
}

export function startReceiver(): Receiver {
  const scripts = new Map<string, Script>();
  const received: ReceivedRequest[] = [];
  let held = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    // Longer than any delay a test scripts: the sender's timeout, not the server, ends a slow request.
    idleTimeout: 60,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => (headers[k] = v));
      const request: ReceivedRequest = {
        path,
        headers,
        body: await req.text(),
        receivedAt: Date.now(),
        status: 0,
        nth: received.filter((r) => r.path === path).length + 1,
      };
      received.push(request);
      const reply: Reply = (scripts.get(path) ?? (() => ({ status: 204 })))(request.nth, request);
      request.status = reply.status;
      if (reply.delayMs) {
        held++;
        await Bun.sleep(reply.delayMs).finally(() => held--);
      }
      request.answeredAt = Date.now();
      return new Response(reply.body ?? (reply.status === 204 ? null : "{}"), {
        status: reply.status,
        headers: reply.headers,
      });
    },
  });
  const port = server.port!;
  return {
    port,
    hostPort: `127.0.0.1:${port}`,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    script: (path, script) => void scripts.set(path, script),
    requests: (path) => received.filter((r) => path === undefined || r.path === path),
    holding: () => held,
    stop: () => void server.stop(true),
  };
}

/** The most requests of `requests` the receiver held at once (from arrival to answer; unanswered ones till now). */
export function mostAtOnce(requests: readonly ReceivedRequest[]): number {
  const edges = requests.flatMap((r) => [
    { at: r.receivedAt, d: 1 },
    { at: r.answeredAt ?? Date.now(), d: -1 },
  ]);
  // An answer and an arrival at the same millisecond: the answer first (the slot was free again).
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let most = 0;
  for (const e of edges) most = Math.max(most, (now += e.d));
  return most;
}

/**
 * Verifies a received request with the standardwebhooks package and a partner's secret; returns the parsed body.
 * Throws (the package's WebhookVerificationError) when the signature does not match.
 */
export function verified(
  request: ReceivedRequest,
  secret: string,
): { type: string; timestamp: string; data: Record<string, any> } {
  return new Webhook(secret).verify(request.body, request.headers) as {
    type: string;
    timestamp: string;
    data: Record<string, any>;
  };
}
