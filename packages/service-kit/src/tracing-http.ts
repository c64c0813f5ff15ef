// The server span of every HTTP request, for any service that answers with a fetch-style handler (Request in,
// Response out): Elysia apps through serveTraced, anything else through traceHttp directly.
//
// Our own middleware rather than @elysiajs/opentelemetry: the plugin starts the Node SDK of an older OpenTelemetry
// line (sdk-node 0.200, a second copy of the SDK), records every request header as a span attribute (the partner's
// Authorization: Bearer key among them), opens a span per lifecycle hook, and relies on private fields of the
// context manager. Node's http instrumentation would not help either: Bun.serve is not Node's http server, so it
// never sees a request. Here the whole handling runs inside the request's context (AsyncLocalStorage), which
// every await below keeps (tracing-context.test.ts checks the Bun cases we rely on).
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { Server } from "bun";
import { acceptedRequestId, TRACE_HEADERS } from "./trace.ts";
import { recordFailure, type Tracing, withoutSpan } from "./tracing.ts";

/** The path of a request URL, without its query (which may carry what does not belong in a trace store). */
function pathOf(url: string): string {
  const start = url.charCodeAt(0) === 47 ? 0 : url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const query = url.indexOf("?", start);
  return query < 0 ? url.slice(start) : url.slice(start, query);
}

/**
 * Wraps a handler so each request runs in its own server span (a child of the client's traceparent when it sent a
 * valid one; sampled by our ratio, not the client's flag) with its request ID (the client's X-Request-Id when
 * acceptable, else a new UUID) in the active context, where the application reads both (activeRequestId,
 * activeTraceparent) to answer them in headers and to stamp the events it writes.
 */
export function traceHttp<A extends unknown[]>(
  tracing: Tracing,
  handle: (request: Request, ...rest: A) => Response | Promise<Response>,
): (request: Request, ...rest: A) => Promise<Response> {
  return async (request, ...rest) => {
    const requestId = acceptedRequestId(request.headers.get(TRACE_HEADERS.requestId)) ?? crypto.randomUUID();
    const span = tracing.startSpan(request.method, {
      kind: SpanKind.SERVER,
      parent: request.headers.get(TRACE_HEADERS.traceparent),
    });
    if (span.isRecording())
      span.setAttributes({
        "http.request.method": request.method,
        "url.path": pathOf(request.url),
        "pss.request_id": requestId,
      });
    try {
      // From the root context: Bun runs a server's handler in the context Bun.serve was called in
      // (tracing-context.test.ts), which must not reach the requests.
      const response = await withoutSpan(() =>
        tracing.run(span, () => handle(request, ...rest), { requestId, serverSpan: true }),
      );
      span.setAttribute("http.response.status_code", response.status);
      if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      return response;
    } catch (err) {
      recordFailure(span, err);
      throw err;
    } finally {
      span.end();
    }
  };
}

/** What serveTraced needs of an Elysia app: its handler, and where its routes find the server (requestIP). */
export interface FetchApp {
  fetch(request: Request): Response | Promise<Response>;
  server: Server<unknown> | null;
}

/** The Bun.serve options the services use (everything but the handler). */
export interface ServeOptions {
  port: number;
  hostname?: string;
  reusePort?: boolean;
  development?: boolean;
  maxRequestBodySize?: number;
  idleTimeout?: number;
  error?: (err: Error) => Response | Promise<Response>;
}

/**
 * Elysia's listen(), with the app's handler wrapped by traceHttp: Bun.serve with the same defaults, and the
 * server handed to the app (its routes' `server`, app.stop()). The app must not use Bun's own router
 * (systemRouter: false), whose routes would bypass the handler.
 */
export function serveTraced(app: FetchApp, tracing: Tracing, options: ServeOptions): Server<unknown> {
  const server = Bun.serve({
    idleTimeout: 30,
    ...options,
    fetch: traceHttp(tracing, (request: Request) => app.fetch(request)),
  });
  app.server = server;
  return server;
}
