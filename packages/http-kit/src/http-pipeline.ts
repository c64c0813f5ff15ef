// The request handling every HTTP service shares (the partner API and the marketplace): what each request passes
// before routing (edge limits, a URL without a host), how a JSON body is read (size cap, depth, the text rules), the
// one error mapper with the request's trace on every answer, 404/405 from the service's own routes, the request's span
// named by its route (with the record its path names), the request log line and the HTTP metrics. A service installs it on its Elysia app and adds only what is its own (a partner guard,
// an HTML page for browsers that reach no route, fields of its log line), so a change here reaches every service.
import { type AnyElysia, StatusMap } from "elysia";
import { activeSpanRecording, annotateRequest, traceIdOf, type HttpMetrics, type Logger } from "@pss/service-kit";
import { edgeViolation, pathOf, withAbsoluteUrl } from "./edge.ts";
import { mapError } from "./error-mapper.ts";
import { type ApiError, MethodNotAllowedError, NotFoundError } from "./errors.ts";
import { parseJsonRequest } from "./json-body.ts";
import { type RequestTraces, traceResponseHeaders } from "./request-trace.ts";

export interface HttpPipelineOptions {
  logger: Logger;
  traces: RequestTraces;
  maxBodyBytes: number;
  /** Requests by route template and status; absent = not measured. */
  httpMetrics?: HttpMetrics;
  /** Whether the text rules apply while a route's JSON body is parsed (a batch applies them per item); default: all. */
  textRules?: (method: string, route: string) => boolean;
  /**
   * The answer to a request no route serves when it should not be JSON (a browser opening a page that does not
   * exist gets a page); null: the JSON 404.
   */
  notFoundResponse?: (request: Request) => Response | null;
  /** Fields the request log line adds, read from the request's context (the API: the partner). */
  logFields?: (context: object) => Record<string, unknown>;
  /**
   * Sees every answered request once it was sent (the API's request log for the partner portal); absent = nothing
   * more is kept per request.
   */
  onAnswered?: (context: object, answered: AnsweredRequest) => void;
}

/** A request as onAnswered sees it. */
export interface AnsweredRequest {
  /** When it arrived, in epoch milliseconds. */
  at: number;
  status: number;
  durationMs: number;
  /** The JSON error body answered to a 4xx request (null otherwise). */
  clientError: unknown;
}

/** A body that broke a rule while being parsed. Kept until the route's guard has run, so 401 comes first. */
class BodyRejection {
  constructor(readonly error: unknown) {}
}

/** In a route group's onTransform: a body refused while parsing is answered now (after the group's guard). */
export function throwBodyRejection(body: unknown): void {
  if (body instanceof BodyRejection) throw body.error;
}

/** The record a route's path names, as span attributes: what an operator searches traces by. */
function recordAttributes(params: Record<string, string | undefined> | undefined): Record<string, string> {
  const attributes: Record<string, string> = {};
  if (!params) return attributes;
  if (params.externalListingId) attributes["pss.external_listing_id"] = params.externalListingId;
  if (params.externalBrokerId) attributes["pss.external_broker_id"] = params.externalBrokerId;
  if (params.serviceListingId) attributes["pss.listing_id"] = params.serviceListingId;
  return attributes;
}

/** Whether a request announces a body: a non-zero Content-Length, or a chunked one. */
function hasBody(request: Request): boolean {
  const length = request.headers.get("content-length");
  return (length !== null && length.trim() !== "0") || request.headers.has("transfer-encoding");
}

/** The status an Elysia `set.status` holds, as a number. */
export function statusNumber(status: number | string | undefined): number {
  return typeof status === "number" ? status : status ? ((StatusMap as Record<string, number>)[status] ?? 200) : 200;
}

export interface HttpPipeline {
  /** Adds the hooks to `app` (before its routes) and returns it. */
  install<App extends AnyElysia>(app: App): App;
  /** 405 with Allow when the path exists for other methods, else 404 (from the installed app's routes). */
  unrouted(request: Request): ApiError;
}

export function createHttpPipeline(opts: HttpPipelineOptions): HttpPipeline {
  const { logger, traces } = opts;
  const started = new WeakMap<Request, number>();
  /** Requests no route served (404/405 by unrouted()): one route label value, whatever the path. */
  const unmatched = new WeakSet<Request>();
  const timed = opts.httpMetrics !== undefined || logger.enabled("info") || opts.onAnswered !== undefined;
  /** The error answers of 4xx requests, for onAnswered. */
  const clientErrors = new WeakMap<Request, unknown>();
  let app: AnyElysia | null = null;
  let routeTable: { method: string; fixed: boolean; pattern: RegExp }[] | null = null;

  const unrouted = (request: Request): ApiError => {
    unmatched.add(request);
    const path = pathOf(request.url);
    routeTable ??= (app?.routes ?? [])
      .filter((r) => !r.path.endsWith("*"))
      .map((r) => ({
        method: r.method,
        fixed: !r.path.includes(":"),
        pattern: new RegExp(`^${r.path.replace(/:[^/]+/g, "[^/]+")}$`),
      }));
    // A path a route names literally (/partner/v1/listings/batch) answers with that route's methods, as the
    // document lists them, not also with those of a parameter route it happens to match (/listings/{id}).
    const matching = routeTable.filter((r) => r.pattern.test(path));
    const literal = matching.filter((r) => r.fixed);
    const allowed = [...new Set((literal.length ? literal : matching).map((r) => r.method))];
    return allowed.length ? new MethodNotAllowedError(allowed) : new NotFoundError();
  };

  function install<App extends AnyElysia>(target: App): App {
    app = target;
    const handle = (request: Request) => target.handle(request);
    return (
      target
        .onRequest(({ request, set }) => {
          // HTTP/1.0 without Host: route the same request under an absolute URL, so nothing downstream guesses.
          const absolute = withAbsoluteUrl(request);
          if (absolute) return handle(absolute);
          if (timed) started.set(request, performance.now());
          // Decided now, answered on every response (errors included), carried by the events this request writes.
          Object.assign(set.headers, traceResponseHeaders(traces.of(request)));
          const violation = edgeViolation(request, opts.maxBodyBytes);
          if (violation) throw violation;
        })
        // The request's span is named by its route template, and carries the record its path names.
        .onTransform(({ request, route, params }) => {
          if (activeSpanRecording())
            annotateRequest(recordAttributes(params as Record<string, string | undefined>), {
              method: request.method,
              route,
            });
        })
        .onParse(async ({ request, route }) => {
          // An action without a body (POST …/test, …/retry, a DELETE such as /partner/v1/test-data): nothing to parse,
          // so no Content-Type is needed.
          if ((request.method === "POST" || request.method === "DELETE") && !hasBody(request)) return null;
          try {
            return await parseJsonRequest(request, opts.maxBodyBytes, {
              textRules: opts.textRules?.(request.method, route) ?? true,
            });
          } catch (err) {
            return new BodyRejection(err);
          }
        })
        .onError(({ code, error, request, set }) => {
          let failure: unknown = error;
          if (code === "NOT_FOUND") failure = unrouted(request);
          if (failure instanceof NotFoundError) {
            const page = opts.notFoundResponse?.(request);
            if (page) return page;
          }
          const trace = traces.of(request);
          const mapped = mapError({ code, error: failure, requestId: trace.requestId, logger: traces.logger(request) });
          set.status = mapped.status;
          Object.assign(set.headers, traceResponseHeaders(trace));
          set.headers["content-type"] = "application/json";
          for (const [k, v] of Object.entries(mapped.headers ?? {})) set.headers[k] = v;
          if (opts.onAnswered && mapped.status >= 400 && mapped.status < 500) clientErrors.set(request, mapped.body);
          return mapped.body;
        })
        .onAfterResponse((context) => {
          const { request, set, route } = context;
          const begun = started.get(request);
          const status = statusNumber(set.status);
          if (opts.onAnswered && begun !== undefined) {
            opts.onAnswered(context, {
              at: performance.timeOrigin + begun,
              status,
              durationMs: Math.round((performance.now() - begun) * 10) / 10,
              clientError: clientErrors.get(request) ?? null,
            });
          }
          if (opts.httpMetrics && begun !== undefined) {
            opts.httpMetrics.observe({
              method: request.method,
              route: unmatched.has(request) ? null : route,
              status,
              seconds: (performance.now() - begun) / 1000,
            });
          }
          if (!logger.enabled("info")) return;
          const trace = traces.of(request);
          logger.info("request", {
            requestId: trace.requestId,
            traceId: traceIdOf(trace.traceparent),
            traceparent: trace.traceparent,
            method: request.method,
            path: pathOf(request.url),
            status: set.status,
            durationMs: begun ? Math.round((performance.now() - begun) * 10) / 10 : undefined,
            ...opts.logFields?.(context),
          });
        }) as unknown as App
    );
  }

  return { install, unrouted };
}
