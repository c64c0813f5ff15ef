// Sends recorded spans to Zipkin (its JSON v2 intake, POST /api/v2/spans) in the background. A request never waits
// for it: a finished span is pushed on a bounded queue, and batches leave on a timer or when a batch is full. When
// the store does not answer (refused, an error status, no answer within the timeout) the batch is dropped and
// counted; the next batch tries again, so export resumes by itself when the store is back. A full queue drops the
// newest spans, counted as well (tracing_spans_dropped_total{reason}).
//
// Our own processor and exporter rather than the SDK's BatchSpanProcessor and @opentelemetry/exporter-zipkin: the
// exporter's request has no timeout (a store that accepts connections and never answers would keep every batch
// pending), and neither reports what it drops except through a diagnostic logger; here both are metrics.
import { type HrTime, SpanKind, SpanStatusCode, TraceFlags } from "@opentelemetry/api";
import type { ReadableSpan, SpanProcessor } from "@opentelemetry/sdk-trace";
import { Counter } from "prom-client";
import type { Logger } from "./logger.ts";
import type { Metrics } from "./metrics.ts";

export interface SpanExportOptions {
  url: string;
  serviceName: string;
  metrics?: Metrics;
  logger?: Logger;
  /** Spans kept while waiting to be sent; more are dropped. Default 4096. */
  maxQueue?: number;
  /** Spans per request to the store. Default 512. */
  batchSize?: number;
  /** How often what is queued is sent. Default 1 s. */
  intervalMs?: number;
  /** A request to the store that has not answered by then counts as failed. Default 3 s. */
  timeoutMs?: number;
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
}

export type DropReason = "store_unavailable" | "queue_full";

const ZIPKIN_KINDS: Partial<Record<SpanKind, string>> = {
  [SpanKind.SERVER]: "SERVER",
  [SpanKind.CLIENT]: "CLIENT",
  [SpanKind.PRODUCER]: "PRODUCER",
  [SpanKind.CONSUMER]: "CONSUMER",
};

const micros = (t: HrTime) => t[0] * 1_000_000 + Math.round(t[1] / 1000);

/** One span in Zipkin's v2 JSON model: IDs as they are, times in microseconds, attributes as string tags. */
export function toZipkinSpan(span: ReadableSpan, serviceName: string): Record<string, unknown> {
  const ctx = span.spanContext();
  const tags: Record<string, string> = {};
  for (const [key, value] of Object.entries(span.attributes)) {
    if (value === undefined || value === null) continue;
    tags[key] = Array.isArray(value) ? JSON.stringify(value) : String(value);
  }
  if (span.status.code === SpanStatusCode.ERROR) {
    tags["otel.status_code"] = "ERROR";
    // Zipkin's UI marks a span with an "error" tag as failed.
    tags.error = span.status.message || "true";
  }
  const zipkin: Record<string, unknown> = {
    traceId: ctx.traceId,
    id: ctx.spanId,
    name: span.name,
    timestamp: micros(span.startTime),
    duration: Math.max(1, micros(span.duration)),
    localEndpoint: { serviceName },
    tags,
  };
  if (span.parentSpanContext?.spanId) zipkin.parentId = span.parentSpanContext.spanId;
  const kind = ZIPKIN_KINDS[span.kind];
  if (kind) zipkin.kind = kind;
  if (span.events.length > 0)
    zipkin.annotations = span.events.map((e) => ({ timestamp: micros(e.time), value: e.name }));
  return zipkin;
}

export interface SpanExportMetrics {
  exported(spans: number): void;
  dropped(spans: number, reason: DropReason): void;
}

function exportMetrics(metrics: Metrics | undefined): SpanExportMetrics {
  if (!metrics) return { exported() {}, dropped() {} };
  const exported = new Counter({
    name: "tracing_spans_exported_total",
    help: "Spans the span store (Zipkin) accepted",
    registers: [metrics.registry],
  });
  const dropped = new Counter({
    name: "tracing_spans_dropped_total",
    help: "Spans dropped without being stored: the store did not take them (store_unavailable) or the export queue was full (queue_full)",
    labelNames: ["reason"] as const,
    registers: [metrics.registry],
  });
  // Both reasons exist from the start, so an alert on the rate sees 0 rather than no series.
  dropped.inc({ reason: "store_unavailable" }, 0);
  dropped.inc({ reason: "queue_full" }, 0);
  return {
    exported: (n) => exported.inc(n),
    dropped: (n, reason) => dropped.inc({ reason }, n),
  };
}

export function createZipkinSpanProcessor(opts: SpanExportOptions): SpanProcessor {
  const maxQueue = opts.maxQueue ?? 4096;
  const batchSize = opts.batchSize ?? 512;
  const timeoutMs = opts.timeoutMs ?? 3000;
  const send = opts.fetch ?? ((url: string, init: RequestInit) => fetch(url, init));
  const metrics = exportMetrics(opts.metrics);
  const log = opts.logger?.child({ component: "span-export", store: opts.url });
  let queue: ReadableSpan[] = [];
  let sending: Promise<void> | null = null;
  let storeDown = false;
  let stopped = false;

  async function post(batch: ReadableSpan[]): Promise<void> {
    try {
      const res = await send(opts.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(batch.map((s) => toZipkinSpan(s, opts.serviceName))),
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (!res.ok) throw new Error(`the span store answered ${res.status}`);
      metrics.exported(batch.length);
      if (storeDown) {
        storeDown = false;
        log?.info("span store answers again; spans are exported");
      }
    } catch (err) {
      metrics.dropped(batch.length, "store_unavailable");
      if (!storeDown) {
        storeDown = true;
        log?.warn("span store unavailable; spans are dropped (counted) until it answers", {
          err: (err as Error).message,
        });
      }
    }
  }

  /** Sends one batch unless one is on its way; resolves when the batch in flight is done. */
  function sendBatch(): Promise<void> {
    if (sending) return sending;
    if (queue.length === 0) return Promise.resolve();
    const batch = queue.length <= batchSize ? queue : queue.slice(0, batchSize);
    queue = queue.length <= batchSize ? [] : queue.slice(batchSize);
    sending = post(batch).finally(() => {
      sending = null;
      // A full batch waiting goes at once rather than at the next tick.
      if (!stopped && queue.length >= batchSize) void sendBatch();
    });
    return sending;
  }

  const timer = setInterval(() => void sendBatch(), opts.intervalMs ?? 1000);
  timer.unref?.();

  async function flushAll(): Promise<void> {
    // Each round sends (or drops) a batch, so this ends even when the store is down.
    while (queue.length > 0 || sending) await sendBatch();
  }

  return {
    onStart() {},
    onEnd(span) {
      if (stopped || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
      if (queue.length >= maxQueue) {
        metrics.dropped(1, "queue_full");
        return;
      }
      queue.push(span);
      if (queue.length >= batchSize) void sendBatch();
    },
    forceFlush: flushAll,
    async shutdown() {
      stopped = true;
      clearInterval(timer);
      await flushAll();
    },
  };
}
