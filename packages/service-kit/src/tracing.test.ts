import { describe, expect, test } from "bun:test";
import { createMetrics } from "./metrics.ts";
import { parseTraceparent } from "./trace.ts";
import {
  activeRequestId,
  activeTraceparent,
  annotateRequest,
  createTracing,
  inChildSpan,
  readTracingConfig,
  SpanKind,
  traceparentOf,
  type Tracing,
  withoutSpan,
} from "./tracing.ts";
import { traceHttp } from "./tracing-http.ts";
import { createEnvReader, ConfigError } from "./config.ts";

const CLIENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const UNSAMPLED_CLIENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";

/** A tracing whose export goes to an array (the store's intake, as JSON bodies). */
function recordingTracing(ratio = 1, serviceName = "pss-test"): { tracing: Tracing; sent: Record<string, unknown>[] } {
  const sent: Record<string, unknown>[] = [];
  const tracing = createTracing(
    { zipkinUrl: "http://127.0.0.1:9/api/v2/spans", sampleRatio: ratio, serviceName },
    {
      export: {
        fetch: async (_url, init) => {
          sent.push(...(JSON.parse(String(init.body)) as Record<string, unknown>[]));
          return new Response(null, { status: 202 });
        },
      },
    },
  );
  return { tracing, sent };
}

describe("sampling", () => {
  test("a request is sampled by our ratio, whatever the client's flag says", async () => {
    const off = recordingTracing(0);
    const on = recordingTracing(1);
    expect(off.tracing.recording).toBe(false);
    const flagOf = (t: Tracing, parent: string | null) => {
      const span = t.startSpan("request", { kind: SpanKind.SERVER, parent });
      span.end();
      return parseTraceparent(traceparentOf(span))!.flags;
    };
    expect(flagOf(off.tracing, CLIENT)).toBe("00");
    expect(flagOf(on.tracing, UNSAMPLED_CLIENT)).toBe("01");
    await on.tracing.flush();
    expect(off.sent).toEqual([]);
  });

  test("below the request, spans follow their parent's decision, across services", async () => {
    const { tracing, sent } = recordingTracing(1);
    const follows = tracing.startSpan("consume", { kind: SpanKind.CONSUMER, parent: UNSAMPLED_CLIENT });
    const sampled = tracing.startSpan("consume", { kind: SpanKind.CONSUMER, parent: CLIENT });
    expect(follows.isRecording()).toBe(false);
    expect(sampled.isRecording()).toBe(true);
    follows.end();
    sampled.end();
    await tracing.flush();
    expect(sent.map((s) => s.traceId)).toEqual(["4bf92f3577b34da6a3ce929d0e0e4736"]);
    expect(sent[0]).toMatchObject({
      parentId: "00f067aa0ba902b7",
      kind: "CONSUMER",
      localEndpoint: { serviceName: "pss-test" },
    });
  });
});

describe("the active context", () => {
  test("child spans, the request ID and the traceparent follow the request across awaits", async () => {
    const { tracing, sent } = recordingTracing();
    const seen: Record<string, unknown> = {};
    const handler = traceHttp(tracing, async (request: Request) => {
      await Bun.sleep(1);
      annotateRequest({ "pss.partner_id": "p-1" }, { method: request.method, route: "/things/:id" });
      await inChildSpan("write", async (span) => {
        await Bun.sleep(1);
        seen.inChild = activeTraceparent();
        seen.childId = span?.spanContext().spanId;
        seen.requestId = activeRequestId();
      });
      seen.after = activeTraceparent();
      return new Response("ok", { status: 201 });
    });
    const res = await handler(
      new Request("http://localhost/things/1?secret=x", { method: "PUT", headers: { "x-request-id": "r-1" } }),
    );
    expect(res.status).toBe(201);
    expect(seen.requestId).toBe("r-1");
    expect(parseTraceparent(seen.inChild as string)!.parentId).toBe(seen.childId as string);
    await tracing.flush();
    const server = sent.find((s) => s.kind === "SERVER")!;
    const child = sent.find((s) => s.name === "write")!;
    expect(server).toMatchObject({
      name: "PUT /things/:id",
      tags: {
        "http.route": "/things/:id",
        "pss.partner_id": "p-1",
        "pss.request_id": "r-1",
        "http.response.status_code": "201",
        "url.path": "/things/1",
      },
    });
    // The query string never reaches the trace store.
    expect(JSON.stringify(server)).not.toContain("secret");
    expect(child.parentId).toBe(server.id);
    expect(parseTraceparent(seen.after as string)!.parentId).toBe(server.id as string);
    expect(activeTraceparent()).toBeNull();
  });

  test("a thrown handler marks the request's span failed and still ends it", async () => {
    const { tracing, sent } = recordingTracing();
    const handler = traceHttp(tracing, async () => {
      throw new TypeError("boom");
    });
    await expect(handler(new Request("http://localhost/x"))).rejects.toThrow("boom");
    await tracing.flush();
    expect(sent[0]).toMatchObject({ tags: { error: "boom", "error.type": "TypeError" } });
  });

  test("without a recorded parent, inChildSpan runs its work without a span", async () => {
    expect(await inChildSpan("alone", async (span) => span)).toBeNull();
    const off = recordingTracing(0).tracing;
    const span = off.startSpan("request", { kind: SpanKind.SERVER, parent: null });
    expect(await off.run(span, () => inChildSpan("below", async (s) => s))).toBeNull();
    const { tracing } = recordingTracing();
    const recorded = tracing.startSpan("request", { kind: SpanKind.SERVER, parent: null });
    expect(await tracing.run(recorded, () => withoutSpan(() => inChildSpan("batch", async (s) => s)))).toBeNull();
  });
});

describe("configuration", () => {
  test("tracing is off without an endpoint, on with one, and refuses a ratio outside 0 to 1", () => {
    expect(readTracingConfig(createEnvReader({}), "pss-api")).toEqual({
      zipkinUrl: null,
      sampleRatio: 1,
      serviceName: "pss-api",
    });
    const env = {
      TRACING_ZIPKIN_URL: "http://zipkin:9411/api/v2/spans",
      TRACING_SAMPLE_RATIO: "0.1",
      TRACING_SERVICE_NAME: "api-eu",
    };
    expect(readTracingConfig(createEnvReader(env), "pss-api")).toEqual({
      zipkinUrl: env.TRACING_ZIPKIN_URL,
      sampleRatio: 0.1,
      serviceName: "api-eu",
    });
    for (const bad of ["1.5", "-0.1", "half"]) {
      const r = createEnvReader({ TRACING_SAMPLE_RATIO: bad });
      readTracingConfig(r, "pss-api");
      expect(() => r.done()).toThrow(ConfigError);
    }
    const r = createEnvReader({ TRACING_ZIPKIN_URL: "zipkin:9411" });
    readTracingConfig(r, "pss-api");
    expect(() => r.done()).toThrow("TRACING_ZIPKIN_URL");
  });

  test("the export metrics exist from the start on the service's registry", async () => {
    const metrics = createMetrics({ service: "pss-test", defaultMetrics: false });
    createTracing(
      { zipkinUrl: "http://127.0.0.1:9/api/v2/spans", sampleRatio: 1, serviceName: "pss-test" },
      { metrics },
    );
    const text = await metrics.render();
    expect(text).toContain('tracing_spans_dropped_total{reason="store_unavailable",service="pss-test"} 0');
    expect(text).toContain('tracing_spans_dropped_total{reason="queue_full",service="pss-test"} 0');
    expect(text).toContain("tracing_spans_exported_total");
  });
});
