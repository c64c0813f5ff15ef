import { describe, expect, test } from "bun:test";
import { createLogger, createTracing, disabledTracing, parseTraceparent, traceHttp } from "@pss/service-kit";
import { createRequestTraces, traceForRequest, traceResponseHeaders } from "./request-trace.ts";

const INCOMING = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const tracing = disabledTracing("api");

describe("a request's trace", () => {
  test("keeps an acceptable X-Request-Id and continues a valid traceparent as a new step of the same trace", () => {
    const trace = traceForRequest(new Headers({ "x-request-id": "client-req:42", traceparent: INCOMING }), tracing);
    expect(trace.requestId).toBe("client-req:42");
    const parsed = parseTraceparent(trace.traceparent)!;
    expect(parsed.traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    // The client's sampled flag does not make us record: with tracing off, the step is not sampled.
    expect(parsed.flags).toBe("00");
    expect(parsed.parentId).not.toBe("00f067aa0ba902b7");
  });

  test("makes a request ID and a new trace when the client sent none, or values that break the rules", () => {
    for (const headers of [
      new Headers(),
      new Headers({ "x-request-id": "has space", traceparent: INCOMING.toUpperCase() }),
      new Headers({ "x-request-id": "x".repeat(65), traceparent: "00-garbage" }),
    ]) {
      const trace = traceForRequest(headers, tracing);
      expect(trace.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(parseTraceparent(trace.traceparent)).not.toBeNull();
      expect(parseTraceparent(trace.traceparent)!.traceId).not.toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    }
  });

  test("is decided once per request, answered in its headers, and on every line of the request's logger", () => {
    const lines: string[] = [];
    const traces = createRequestTraces(createLogger({ service: "api", write: (l) => lines.push(l) }), tracing);
    const request = new Request("http://localhost/x");
    const trace = traces.of(request);
    expect(traces.of(request)).toBe(trace);
    expect(traces.of(new Request("http://localhost/x")).requestId).not.toBe(trace.requestId);
    expect(traceResponseHeaders(trace)).toEqual({ "x-request-id": trace.requestId, traceparent: trace.traceparent });
    traces.logger(request).info("lead accepted", { leadId: "l-1" });
    expect(JSON.parse(lines[0]!)).toMatchObject({
      msg: "lead accepted",
      requestId: trace.requestId,
      traceId: parseTraceparent(trace.traceparent)!.traceId,
      traceparent: trace.traceparent,
      leadId: "l-1",
    });
  });

  test("served through the tracing middleware, the request's server span decides both", async () => {
    const recording = createTracing(
      { zipkinUrl: "http://127.0.0.1:9/api/v2/spans", sampleRatio: 1, serviceName: "api" },
      { export: { fetch: async () => new Response(null, { status: 202 }) } },
    );
    const traces = createRequestTraces(createLogger({ service: "api", write: () => {} }), tracing);
    let seen: ReturnType<typeof traces.of> | null = null;
    const handler = traceHttp(recording, async (request: Request) => {
      await Bun.sleep(1);
      seen = traces.of(request);
      return new Response("ok");
    });
    await handler(new Request("http://localhost/x", { headers: { "x-request-id": "req-7", traceparent: INCOMING } }));
    expect(seen!.requestId).toBe("req-7");
    const parsed = parseTraceparent(seen!.traceparent)!;
    expect(parsed).toMatchObject({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", flags: "01" });
    expect(parsed.parentId).not.toBe("00f067aa0ba902b7");
    await recording.shutdown();
  });
});
