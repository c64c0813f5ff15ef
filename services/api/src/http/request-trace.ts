// Each request's request ID and W3C traceparent, answered in its headers. Served through the tracing middleware
// (service-kit tracing-http.ts) both are the request's server span's, decided when it arrived; handled without it
// (app.handle in tests) they are decided here the same way, once per request. Writes put both on their outbox rows,
// so the relay sends them with the event and every consumer logs them (docs/operations.md, "Following one request").
import {
  acceptedRequestId,
  activeRequestId,
  activeTraceparent,
  SpanKind,
  TRACE_HEADERS,
  traceIdOf,
  traceparentOf,
  type Logger,
  type Tracing,
} from "@pss/service-kit";

export interface RequestTrace {
  /** The client's X-Request-Id when it is acceptable (1-64 of A-Z a-z 0-9 . _ : -), else a new UUID. */
  requestId: string;
  /** This request's span: the client's trace ID when it sent a valid traceparent, else a new trace; our sampling. */
  traceparent: string;
}

/** The trace of a request handled outside the middleware: a span of `tracing` that is never recorded. */
export function traceForRequest(headers: Headers, tracing: Tracing): RequestTrace {
  const span = tracing.startSpan("request", { kind: SpanKind.SERVER, parent: headers.get(TRACE_HEADERS.traceparent) });
  span.end();
  const traceparent = traceparentOf(span);
  // The SDK's spans always have valid IDs, sampled or not.
  if (traceparent === null) throw new Error("the tracer made a span without a valid context");
  return { requestId: acceptedRequestId(headers.get(TRACE_HEADERS.requestId)) ?? crypto.randomUUID(), traceparent };
}

/** The response headers that give a request's trace back to the client. */
export function traceResponseHeaders(trace: RequestTrace): Record<string, string> {
  return { [TRACE_HEADERS.requestId]: trace.requestId, [TRACE_HEADERS.traceparent]: trace.traceparent };
}

export interface RequestTraces {
  /** The request's trace, the same for the whole request. */
  of(request: Request): RequestTrace;
  /** A logger whose every line carries the request's ID, trace ID and traceparent. */
  logger(request: Request): Logger;
}

export function createRequestTraces(logger: Logger, tracing: Tracing): RequestTraces {
  const traces = new WeakMap<Request, RequestTrace>();
  const of = (request: Request): RequestTrace => {
    let trace = traces.get(request);
    if (!trace) {
      const requestId = activeRequestId();
      const traceparent = activeTraceparent();
      trace =
        requestId !== null && traceparent !== null
          ? { requestId, traceparent }
          : traceForRequest(request.headers, tracing);
      traces.set(request, trace);
    }
    return trace;
  };
  return {
    of,
    logger(request) {
      const { requestId, traceparent } = of(request);
      return logger.child({ requestId, traceId: traceIdOf(traceparent), traceparent });
    },
  };
}
