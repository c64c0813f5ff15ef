// One process's tracing with OpenTelemetry (docs/operations.md, "Following one request"): the API and the trace SDK
// make the spans, the W3C trace-context propagator reads and writes `traceparent` (HTTP and Kafka headers, outbox
// rows), and tracing-export.ts sends recorded spans to Zipkin in the background.
//
// Each service makes its own Tracing (its own provider, sampler and service name: several services run in one test
// process); what links them is the active context, kept by one AsyncLocalStorage context manager per process (the
// OpenTelemetry API's global one, registered once here). The active context also carries the Tracing that made
// the request's or message's span and the request ID, so code far below the HTTP layer or the consumer
// (repositories, SQL writers) opens child spans and stamps outbox rows without being handed anything.
//
// Sampling: an incoming HTTP request is sampled by our ratio whatever the client's flag says (a client cannot make
// us record); everything below it follows its parent's decision, across services too, so a trace is whole or absent.
// Without an endpoint, or at ratio 0, nothing is recorded and nothing is exported: spans are non-recording, which
// still gives every step its own IDs for the logs and the headers.
import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  ParentBasedSampler,
  type Sampler,
  type SamplingResult,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type { EnvReader } from "./config.ts";
import type { Logger } from "./logger.ts";
import type { Metrics } from "./metrics.ts";
import { createZipkinSpanProcessor, type SpanExportOptions } from "./tracing-export.ts";

export { SpanKind, SpanStatusCode, type Attributes, type Span } from "@opentelemetry/api";

/** TRACING_* in each service's configuration table (docs/operations.md, "Configuration"). */
export interface TracingConfig {
  /** Zipkin's span intake (http://host:9411/api/v2/spans); null: tracing off, nothing recorded or exported. */
  zipkinUrl: string | null;
  /** Share of requests traced, 0 to 1 (a trace ID's decision is the same in every service at the same ratio). */
  sampleRatio: number;
  /** The service name spans are shown under. */
  serviceName: string;
}

/**
 * TRACING_ZIPKIN_URL (absent: off), TRACING_SAMPLE_RATIO (0 to 1, default 1) and TRACING_SERVICE_NAME (default
 * `serviceName`): the same three variables in every service's configuration.
 */
export function readTracingConfig(r: EnvReader, serviceName: string): TracingConfig {
  const zipkinUrl = r.optionalString("TRACING_ZIPKIN_URL") === undefined ? null : r.url("TRACING_ZIPKIN_URL");
  const ratioText = r.optionalString("TRACING_SAMPLE_RATIO");
  const sampleRatio = ratioText === undefined ? 1 : Number(ratioText);
  if (!Number.isFinite(sampleRatio) || sampleRatio < 0 || sampleRatio > 1)
    r.problem(`TRACING_SAMPLE_RATIO must be a number from 0 to 1, got '${ratioText}'`);
  return {
    zipkinUrl,
    sampleRatio: Number.isFinite(sampleRatio) ? Math.min(1, Math.max(0, sampleRatio)) : 1,
    serviceName: r.string("TRACING_SERVICE_NAME", serviceName),
  };
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent as a traceparent (a message header, an outbox or delivery row); absent: the active span. */
  parent?: string | null;
}

export interface Tracing {
  readonly serviceName: string;
  /** Spans are recorded and exported (an endpoint is set and the ratio is above 0). */
  readonly recording: boolean;
  /** A span not yet active; activate it with `run`, end it yourself. */
  startSpan(name: string, opts?: SpanOptions): Span;
  /**
   * Runs fn with `span` active; `scope.requestId`: the request ID outbox rows written under it carry;
   * `scope.serverSpan`: this span is the request's (annotateRequest finds it below child spans).
   */
  run<T>(span: Span, fn: () => T, scope?: { requestId?: string | null; serverSpan?: boolean }): T;
  /** Runs fn in a new active span, ended when fn settles; a throw marks it failed and goes on. */
  inSpan<T>(name: string, opts: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T>;
  /** Sends what is queued (tests, shutdown). */
  flush(): Promise<void>;
  /** Flushes within a bounded time and stops the exporter. */
  shutdown(): Promise<void>;
}

const propagator = new W3CTraceContextPropagator();
const TRACING_KEY = createContextKey("pss tracing");
const REQUEST_ID_KEY = createContextKey("pss request id");
const SERVER_SPAN_KEY = createContextKey("pss server span");

let contextManagerReady = false;
/** The process's one context manager (the OpenTelemetry API keeps it globally): AsyncLocalStorage, as on Node. */
export function ensureContextManager(): void {
  if (contextManagerReady) return;
  const manager = new AsyncLocalStorageContextManager();
  manager.enable();
  // False when something else registered one first: then that one is used, which is what it asked for.
  context.setGlobalContextManager(manager);
  contextManagerReady = true;
}

/**
 * Ratio at the edge (a SERVER span: an incoming request), the parent's decision everywhere else. Spans without a
 * parent (a background job's) are sampled by the ratio too.
 */
class EdgeRatioSampler implements Sampler {
  private readonly ratio: TraceIdRatioBasedSampler;
  private readonly parentBased: ParentBasedSampler;
  constructor(ratio: number) {
    this.ratio = new TraceIdRatioBasedSampler(ratio);
    this.parentBased = new ParentBasedSampler({ root: this.ratio });
  }
  shouldSample(ctx: Context, traceId: string, name: string, kind: SpanKind, attributes: Attributes): SamplingResult {
    if (kind === SpanKind.SERVER) return this.ratio.shouldSample(ctx, traceId);
    return this.parentBased.shouldSample(ctx, traceId, name, kind, attributes, []);
  }
  toString(): string {
    return `EdgeRatioSampler{${this.ratio.toString()}}`;
  }
}

/** The context a traceparent names as a remote parent; the root context when it is absent or invalid. */
export function contextOfTraceparent(traceparent: string | null | undefined): Context {
  if (!traceparent) return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter);
}

/** A span's W3C traceparent (what the headers and outbox rows carry); null for an invalid (no-op) span. */
export function traceparentOf(span: Span | undefined): string | null {
  if (!span) return null;
  const carrier: Record<string, string> = {};
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
  return carrier.traceparent ?? null;
}

/** The active span's traceparent, or null outside any span. */
export function activeTraceparent(): string | null {
  return traceparentOf(trace.getActiveSpan());
}

/** The request ID of the request or message being handled, or null. */
export function activeRequestId(): string | null {
  return (context.active().getValue(REQUEST_ID_KEY) as string | undefined) ?? null;
}

/** The active span's trace ID (what a log line carries to open its trace), or null. */
export function activeTraceId(): string | null {
  const span = trace.getActiveSpan();
  return span && trace.isSpanContextValid(span.spanContext()) ? span.spanContext().traceId : null;
}

/** Whether the active span is recorded: code that builds attributes or child spans skips the work otherwise. */
export function activeSpanRecording(): boolean {
  return trace.getActiveSpan()?.isRecording() ?? false;
}

/**
 * Attributes (and, with `route`, the name "<METHOD> <route>") on the request's server span, from wherever the
 * request is being handled: the router, the authentication, a route's handler. Nothing outside a traced request.
 */
export function annotateRequest(attributes: Attributes, route?: { method: string; route: string }): void {
  const span = context.active().getValue(SERVER_SPAN_KEY) as Span | undefined;
  if (!span?.isRecording()) return;
  span.setAttributes(attributes);
  if (route) {
    span.updateName(`${route.method} ${route.route}`);
    span.setAttribute("http.route", route.route);
  }
}

/** A child span of the active one, made by the Tracing that made it; without a recorded parent, fn runs alone. */
export async function inChildSpan<T>(
  name: string,
  fn: (span: Span | null) => Promise<T>,
  opts: { kind?: SpanKind; attributes?: Attributes } = {},
): Promise<T> {
  const active = context.active();
  const tracing = active.getValue(TRACING_KEY) as Tracing | undefined;
  if (!tracing || !trace.getSpan(active)?.isRecording()) return fn(null);
  return tracing.inSpan(name, opts, fn);
}

/** The attributes of a span that is one PostgreSQL statement or transaction. */
export const POSTGRES_SPAN: Attributes = Object.freeze({ "db.system.name": "postgresql" });

/** Runs fn outside every span (work that belongs to no single trace, such as a batch of many messages). */
export function withoutSpan<T>(fn: () => T): T {
  return context.with(ROOT_CONTEXT, fn);
}

/** The active context (its span, request ID and tracing), to run work queued now later within it (inContext). */
export function activeContext(): Context {
  return context.active();
}

/** Runs fn in a context taken earlier (activeContext): queued work stays in the trace of the request that queued it. */
export function inContext<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}

/** Marks a span failed with the error's message (never its stack: lines are shown to operators as they are). */
export function recordFailure(span: Span, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  span.setStatus({ code: SpanStatusCode.ERROR, message: message.slice(0, 500) });
  span.setAttribute("error.type", err instanceof Error ? err.name : typeof err);
}

export interface TracingDeps {
  metrics?: Metrics;
  logger?: Logger;
  /** Export pacing and the transport (tests). */
  export?: Partial<Omit<SpanExportOptions, "url" | "serviceName" | "metrics" | "logger">>;
}

export function createTracing(config: TracingConfig, deps: TracingDeps = {}): Tracing {
  ensureContextManager();
  const recording = config.zipkinUrl !== null && config.sampleRatio > 0;
  const processor =
    recording && config.zipkinUrl
      ? createZipkinSpanProcessor({
          url: config.zipkinUrl,
          serviceName: config.serviceName,
          metrics: deps.metrics,
          logger: deps.logger,
          ...deps.export,
        })
      : null;
  const provider = new TracerProvider({
    sampler: recording ? new EdgeRatioSampler(config.sampleRatio) : new AlwaysOffSampler(),
    resource: resourceFromAttributes({ "service.name": config.serviceName }),
    spanProcessors: processor ? [processor] : [],
  });
  const tracer = provider.getTracer("pss");

  const tracing: Tracing = {
    serviceName: config.serviceName,
    recording,
    startSpan(name, opts = {}) {
      const parent = opts.parent === undefined ? context.active() : contextOfTraceparent(opts.parent);
      return tracer.startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes }, parent);
    },
    run(span, fn, scope) {
      let ctx = trace.setSpan(context.active(), span).setValue(TRACING_KEY, tracing);
      if (scope?.requestId !== undefined) ctx = ctx.setValue(REQUEST_ID_KEY, scope.requestId);
      if (scope?.serverSpan) ctx = ctx.setValue(SERVER_SPAN_KEY, span);
      return context.with(ctx, fn);
    },
    async inSpan(name, opts, fn) {
      const span = tracing.startSpan(name, opts);
      try {
        return await tracing.run(span, () => fn(span));
      } catch (err) {
        recordFailure(span, err);
        throw err;
      } finally {
        span.end();
      }
    },
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
  return tracing;
}

/** Tracing that records nothing: spans still get IDs (logs, headers), nothing is kept or sent. */
export function disabledTracing(serviceName = "pss"): Tracing {
  return createTracing({ zipkinUrl: null, sampleRatio: 0, serviceName });
}
