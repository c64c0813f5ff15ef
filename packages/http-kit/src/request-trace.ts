// Each request's request ID and W3C traceparent, decided once when it arrives and answered in its headers.
// Writes put both on their outbox rows, so the relay sends them with the event and every consumer logs them
// (packages/service-kit/src/trace.ts; docs/operations.md, "Following one request through the logs").
import { childTraceparent, REQUEST_ID_PATTERN, TRACE_HEADERS, type Logger } from "@pss/service-kit";

export interface RequestTrace {
  /** The client's X-Request-Id when it is acceptable (1-64 of A-Z a-z 0-9 . _ : -), else a new UUID. */
  requestId: string;
  /** This request's step of the trace: the client's trace ID and flags when it sent a valid traceparent, else a new trace. */
  traceparent: string;
}

export function traceForRequest(headers: Headers): RequestTrace {
  const incoming = headers.get(TRACE_HEADERS.requestId);
  return {
    requestId: incoming !== null && REQUEST_ID_PATTERN.test(incoming) ? incoming : crypto.randomUUID(),
    traceparent: childTraceparent(headers.get(TRACE_HEADERS.traceparent)),
  };
}

/** The response headers that give a request's trace back to the client. */
export function traceResponseHeaders(trace: RequestTrace): Record<string, string> {
  return { [TRACE_HEADERS.requestId]: trace.requestId, [TRACE_HEADERS.traceparent]: trace.traceparent };
}

export interface RequestTraces {
  /** The request's trace, decided on first use (when it arrives) and the same for the rest of the request. */
  of(request: Request): RequestTrace;
  /** A logger whose every line carries the request's ID and traceparent. */
  logger(request: Request): Logger;
}

export function createRequestTraces(logger: Logger): RequestTraces {
  const traces = new WeakMap<Request, RequestTrace>();
  const of = (request: Request): RequestTrace => {
    let trace = traces.get(request);
    if (!trace) {
      trace = traceForRequest(request.headers);
      traces.set(request, trace);
    }
    return trace;
  };
  return {
    of,
    logger(request) {
      const { requestId, traceparent } = of(request);
      return logger.child({ requestId, traceparent });
    },
  };
}
