import { describe, expect, test } from "bun:test";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import { createLogger } from "./logger.ts";
import { createMetrics } from "./metrics.ts";
import { createZipkinSpanProcessor, toZipkinSpan } from "./tracing-export.ts";

let n = 0;
/** A finished, sampled span as the SDK hands it to a processor. */
function span(over: Partial<ReadableSpan> = {}): ReadableSpan {
  n++;
  const id = n.toString(16).padStart(16, "0");
  return {
    name: `span ${n}`,
    kind: SpanKind.INTERNAL,
    spanContext: () => ({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: id, traceFlags: 1 }),
    parentSpanContext: undefined,
    startTime: [1_700_000_000, 123_456_789],
    endTime: [1_700_000_000, 223_456_789],
    duration: [0, 100_000_000],
    status: { code: SpanStatusCode.UNSET },
    attributes: {},
    links: [],
    events: [],
    ended: true,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
    ...over,
  } as unknown as ReadableSpan;
}

/** A fake store: answers as `answer` says, keeps what it took. */
function store(answer: () => Promise<Response>) {
  const taken: unknown[] = [];
  let requests = 0;
  return {
    taken,
    requests: () => requests,
    fetch: async (_url: string, init: RequestInit) => {
      requests++;
      const res = await answer();
      if (res.ok) taken.push(...(JSON.parse(String(init.body)) as unknown[]));
      return res;
    },
  };
}

async function counter(metrics: ReturnType<typeof createMetrics>, name: string, reason?: string): Promise<number> {
  const text = await metrics.render();
  const line = text
    .split("\n")
    .find((l) => l.startsWith(name) && (reason === undefined || l.includes(`reason="${reason}"`)));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

describe("Zipkin's JSON model", () => {
  test("IDs, microseconds, kind, parent, attributes as string tags, errors and events", () => {
    const zipkin = toZipkinSpan(
      span({
        name: "publish pss.listing-events.v1",
        kind: SpanKind.PRODUCER,
        parentSpanContext: { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: 1 },
        attributes: { "pss.attempt": 2, "pss.flag": true, list: ["a", "b"] },
        status: { code: SpanStatusCode.ERROR, message: "refused" },
        events: [{ name: "retry", time: [1_700_000_000, 150_000_000] }] as ReadableSpan["events"],
      }),
      "pss-api",
    );
    expect(zipkin).toMatchObject({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      parentId: "00f067aa0ba902b7",
      name: "publish pss.listing-events.v1",
      kind: "PRODUCER",
      timestamp: 1_700_000_000_123_457,
      duration: 100_000,
      localEndpoint: { serviceName: "pss-api" },
      tags: {
        "pss.attempt": "2",
        "pss.flag": "true",
        list: '["a","b"]',
        error: "refused",
        "otel.status_code": "ERROR",
      },
      annotations: [{ timestamp: 1_700_000_000_150_000, value: "retry" }],
    });
    const plain = toZipkinSpan(span(), "pss-api");
    expect(plain.kind).toBeUndefined();
    expect(plain.parentId).toBeUndefined();
    expect(plain.annotations).toBeUndefined();
  });
});

describe("the span export", () => {
  test("batches leave in the background and the store gets every span", async () => {
    const s = store(async () => new Response(null, { status: 202 }));
    const metrics = createMetrics({ service: "t", defaultMetrics: false });
    const processor = createZipkinSpanProcessor({
      url: "http://z/api/v2/spans",
      serviceName: "t",
      metrics,
      batchSize: 3,
      intervalMs: 60_000,
      fetch: s.fetch,
    });
    for (let i = 0; i < 7; i++) processor.onEnd(span());
    await processor.forceFlush();
    expect(s.taken).toHaveLength(7);
    expect(s.requests()).toBe(3);
    expect(await counter(metrics, "tracing_spans_exported_total")).toBe(7);
    // Not sampled: never queued.
    processor.onEnd(
      span({
        spanContext: () => ({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00000000000000ff", traceFlags: 0 }),
      }),
    );
    await processor.shutdown();
    expect(s.taken).toHaveLength(7);
  });

  test("a store that is down: spans are dropped and counted, one warning, and export resumes when it answers", async () => {
    let up = false;
    const s = store(async () => {
      if (!up) throw new TypeError("Unable to connect");
      return new Response(null, { status: 202 });
    });
    const lines: string[] = [];
    const metrics = createMetrics({ service: "t", defaultMetrics: false });
    const processor = createZipkinSpanProcessor({
      url: "http://z/api/v2/spans",
      serviceName: "t",
      metrics,
      logger: createLogger({ service: "t", write: (l) => lines.push(l) }),
      intervalMs: 60_000,
      fetch: s.fetch,
    });
    for (let round = 0; round < 3; round++) {
      processor.onEnd(span());
      processor.onEnd(span());
      await processor.forceFlush();
    }
    expect(await counter(metrics, "tracing_spans_dropped_total", "store_unavailable")).toBe(6);
    expect(lines.filter((l) => l.includes("span store unavailable"))).toHaveLength(1);
    up = true;
    processor.onEnd(span());
    await processor.forceFlush();
    expect(s.taken).toHaveLength(1);
    expect(lines.filter((l) => l.includes("span store answers again"))).toHaveLength(1);
    await processor.shutdown();
  });

  test("an error status counts as down, and a store that never answers is given up on after the timeout", async () => {
    const metrics = createMetrics({ service: "t", defaultMetrics: false });
    const refusing = createZipkinSpanProcessor({
      url: "http://z/api/v2/spans",
      serviceName: "t",
      metrics,
      intervalMs: 60_000,
      fetch: store(async () => new Response("no", { status: 503 })).fetch,
    });
    refusing.onEnd(span());
    await refusing.forceFlush();
    expect(await counter(metrics, "tracing_spans_dropped_total", "store_unavailable")).toBe(1);
    await refusing.shutdown();

    const hanging = createZipkinSpanProcessor({
      url: "http://z/api/v2/spans",
      serviceName: "t",
      intervalMs: 60_000,
      timeoutMs: 100,
      fetch: (_url, init) =>
        new Promise((_resolve, reject) => init.signal?.addEventListener("abort", () => reject(init.signal?.reason))),
    });
    hanging.onEnd(span());
    const began = performance.now();
    await hanging.forceFlush();
    expect(performance.now() - began).toBeLessThan(2000);
    await hanging.shutdown();
  });

  test("ending a span never waits for the store, and a full queue drops the newest spans, counted", async () => {
    const answered = Promise.withResolvers<Response>();
    const metrics = createMetrics({ service: "t", defaultMetrics: false });
    const processor = createZipkinSpanProcessor({
      url: "http://z/api/v2/spans",
      serviceName: "t",
      metrics,
      maxQueue: 5,
      batchSize: 2,
      intervalMs: 60_000,
      fetch: () => answered.promise,
    });
    const began = performance.now();
    // The first two leave as a batch (and hang); the queue then holds 5; the rest are dropped.
    for (let i = 0; i < 10; i++) processor.onEnd(span());
    expect(performance.now() - began).toBeLessThan(50);
    expect(await counter(metrics, "tracing_spans_dropped_total", "queue_full")).toBe(3);
    answered.resolve(new Response(null, { status: 202 }));
    await processor.shutdown();
    expect(await counter(metrics, "tracing_spans_exported_total")).toBe(7);
  });
});
