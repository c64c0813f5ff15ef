// OpenAPI 3.1 built from the routes themselves: the TypeBox schemas that validate requests are JSON Schema,
// so the document cannot drift from what the API enforces. What a generic JSON Schema tool cannot know (our
// custom formats, the text rules the HTTP edge applies to every body, the answers the edge gives on any
// operation) is added here from the same constants the server uses.
import {
  COUNTRY_CODES,
  DOCUMENTED_ONLY,
  EMAIL_PATTERN,
  ErrorResponse,
  EXTERNAL_ID_PATTERN,
  HTTP_URL_PATTERN,
  Limits,
  MAX_JSON_DEPTH,
  MULTILINE_TEXT_FIELDS,
  MULTILINE_TEXT_PATTERN,
  PathParameters,
  SINGLE_LINE_TEXT_PATTERN,
} from "@pss/contracts";
import type { DocumentDecoration } from "elysia";
import { webhookEventDocs } from "./openapi-webhooks.ts";
import {
  DEFAULT_IDEMPOTENCY_RETENTION_HOURS,
  IDEMPOTENCY_KEY_RULE,
  IdempotencyKeyReusedError,
} from "../http/idempotency.ts";

/**
 * Responses a route documents (descriptions, and schemas where the framework does not validate them). Small answers
 * also declare `response:` (validated, and typed against the handler); the large read models (listings, brokers,
 * their pages and histories, buyer search, the feed's pre-serialised page, reports) are documented here only, so
 * they are not re-checked per request.
 */
export type DocumentedResponses = Record<number, string | { description: string; schema: unknown }>;

/**
 * A route's `detail.responses`: our own shape (read back by buildOpenApiDocument below), where Elysia's type
 * expects finished OpenAPI response objects. The one cast between the two.
 */
export function documented(responses: DocumentedResponses): DocumentDecoration["responses"] {
  return responses as unknown as DocumentDecoration["responses"];
}

/**
 * An operation's examples, declared beside its route (in the feature's *-docs.ts, so they move with the route): one
 * request as a client sends it, and the body of each answer shown. The document shows the request as parameter
 * `example`s, a request body example and a curl command (`x-codeSamples`), and each answer under its status;
 * tests check every example against the schema beside it and send the requests to the real API
 * (packages/sdk/test/openapi-examples.test.ts, services/api/test/status-table.test.ts).
 */
export interface OperationExamples {
  request: {
    summary: string;
    /** Path parameters by name, as sent (before percent-encoding). */
    params?: Record<string, string | number>;
    query?: Record<string, string>;
    body?: unknown;
  };
  /** Answers by status: what the API answers to the request above (the success) and to others worth showing. */
  responses: Partial<Record<number, { summary: string; value: unknown }>>;
}

/** Where a route's `detail` carries its OperationExamples. */
export const EXAMPLES_KEY = "x-pss-examples";

/** A route's examples, spread into its `detail` (an extension key, read back by buildOpenApiDocument below). */
export function withExamples(examples: OperationExamples): object {
  return { [EXAMPLES_KEY]: examples };
}

/** GET /partner/v1/openapi.json's own examples. */
export const OPENAPI_EXAMPLES: OperationExamples = {
  request: { summary: "The document (no key needed)" },
  responses: {
    200: {
      summary: "OpenAPI 3.1 (abridged here)",
      value: {
        openapi: "3.1.0",
        info: { title: "Partner Syndication Service", version: "1" },
        servers: [{ url: "https://market.example.com" }],
        paths: { "/partner/v1/health": { get: { summary: "Verify reachability and credentials" } } },
      },
    },
  },
};

/** The request of an example as a curl command, with the guide's variables for the base URL and the key. */
export function curlOf(method: string, path: string, examples: OperationExamples, isPublic: boolean): string {
  const { params = {}, query, body } = examples.request;
  const filled = path.replace(/\{([A-Za-z0-9_]+)\}/g, (_, name: string) => {
    if (params[name] === undefined) throw new Error(`${method} ${path}: the request example has no ${name}`);
    return encodeURIComponent(String(params[name]));
  });
  const search = query && Object.keys(query).length ? `?${new URLSearchParams(query)}` : "";
  const parts = ["curl -s"];
  if (method !== "GET") parts.push(`-X ${method}`);
  if (!isPublic) parts.push('-H "Authorization: Bearer $PSS_API_KEY"');
  if (body !== undefined) parts.push('-H "Content-Type: application/json"');
  parts.push(`"$PSS_API_URL${filled}${search}"`);
  if (body !== undefined) parts.push(`-d '${JSON.stringify(body).replace(/'/g, "'\\''")}'`);
  return parts.join(" ");
}

interface RouteInfo {
  method: string;
  path: string;
  hooks?: {
    body?: unknown;
    query?: unknown;
    response?: Record<string, unknown> | unknown;
    detail?: { summary?: string; description?: string; responses?: unknown; hide?: boolean; [EXAMPLES_KEY]?: unknown };
  };
}

export interface OpenApiOptions {
  serverUrl: string;
  documentedPrefixes: string[];
  /** Paths under the partner prefix that need no key. */
  publicPaths: string[];
  /** Paths that answer without touching PostgreSQL or any other dependency (never 503). */
  dependencyFreePaths?: string[];
}

const plain = (schema: unknown) => JSON.parse(JSON.stringify(schema));

/** Turns what only our validator understands into keywords every JSON Schema tool understands. */
function portableFormat(schema: Record<string, unknown>): void {
  switch (schema.format) {
    case "country-code": {
      // 249 codes: stated once, in components.
      const { description } = schema;
      for (const key of Object.keys(schema)) delete schema[key];
      Object.assign(schema, { $ref: "#/components/schemas/CountryCode" }, description ? { description } : {});
      break;
    }
    case "http-url":
      delete schema.format;
      schema.pattern = HTTP_URL_PATTERN;
      break;
    case "external-id":
      delete schema.format;
      schema.pattern = EXTERNAL_ID_PATTERN;
      break;
    case "email":
      // Our rule, not RFC 5322's: a tool checking "email" its own way would disagree with the server.
      delete schema.format;
      schema.pattern = EMAIL_PATTERN;
      break;
  }
}

/** Walks a schema; `visit` sees every sub-schema with the property name it sits under (if any). */
function walk(
  schema: unknown,
  visit: (s: Record<string, unknown>, property: string | null) => void,
  property: string | null = null,
): void {
  if (Array.isArray(schema)) return schema.forEach((s) => walk(s, visit, property));
  if (!schema || typeof schema !== "object") return;
  const s = schema as Record<string, unknown>;
  visit(s, property);
  for (const [key, value] of Object.entries(s)) {
    if (key === "properties" && value && typeof value === "object") {
      for (const [name, sub] of Object.entries(value)) walk(sub, visit, name);
    } else if (
      key === "items" ||
      key === "anyOf" ||
      key === "oneOf" ||
      key === "allOf" ||
      key === "not" ||
      key === "additionalProperties"
    ) {
      walk(value, visit, property);
    } else if (key === "patternProperties" && value && typeof value === "object") {
      for (const sub of Object.values(value)) walk(sub, visit, property);
    }
  }
}

/** Prepares a schema for the document: documented-only keywords merged, custom formats made portable. */
function documentSchema(schema: unknown): Record<string, unknown> {
  const copy = plain(schema);
  walk(copy, (s) => {
    const extra = s[DOCUMENTED_ONLY];
    if (extra && typeof extra === "object") {
      delete s[DOCUMENTED_ONLY];
      Object.assign(s, extra);
    }
    portableFormat(s);
    // Every object schema of @pss/contracts states additionalProperties (so the validator never has to add it).
    // `true` is JSON Schema's default: left out here, since generators (openapi-typescript) would otherwise give
    // every read model an index signature. `false` (request bodies and queries, validated responses) stays.
    if (s.additionalProperties === true) delete s.additionalProperties;
  });
  return copy;
}

/**
 * Request bodies: the HTTP edge refuses, in every string, control characters and lone surrogates (tab, LF and
 * CR are allowed in multi-line fields). A string that already has a stricter pattern, format or enum keeps it.
 */
function withTextRules(schema: Record<string, unknown>): Record<string, unknown> {
  walk(schema, (s, property) => {
    if (s.type !== "string" || s.pattern || s.format || s.enum || s.const !== undefined) return;
    s.pattern = property && MULTILINE_TEXT_FIELDS.has(property) ? MULTILINE_TEXT_PATTERN : SINGLE_LINE_TEXT_PATTERN;
  });
  return schema;
}

// Stated once in components and referred to from every operation.
const COMPONENTS = {
  schemas: {
    ErrorResponse: documentSchema(ErrorResponse),
    CountryCode: {
      type: "string",
      enum: [...COUNTRY_CODES],
      description: "ISO 3166-1 alpha-2 country code, upper case (e.g. US)",
    },
  },
  headers: {
    RequestId: {
      description:
        "The request's ID (the client's X-Request-Id if it was well-formed); quote it when reporting a problem",
      required: true,
      schema: { type: "string" },
    },
    RetryAfter: {
      description: "Seconds to wait before trying again",
      required: true,
      schema: { type: "string", pattern: "^[0-9]+$" },
    },
  },
};
const REQUEST_ID = { $ref: "#/components/headers/RequestId" };
/**
 * Answers to a method rather than to an operation: a path answers 405 to a standard method it does not serve (HEAD
 * is served wherever GET is), and every path 501 to a method outside HTTP's standard ones. Stated once in
 * components and named in info.description; services/api/test/status-table.test.ts holds both on every path.
 */
const METHOD_RESPONSES = {
  MethodNotAllowed: {
    description:
      "405: the path exists, but not for this method (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, TRACE, CONNECT and QUERY are routed); the Allow header lists the path's methods. Without a key, a partner path answers 401 first",
    headers: {
      "X-Request-Id": REQUEST_ID,
      Allow: { description: "The path's methods, e.g. PUT, GET", required: true, schema: { type: "string" } },
    },
    content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorResponse" } } },
  },
  MethodNotImplemented: {
    description:
      "501: a method outside HTTP's standard ones (PROPFIND, MKCOL, ...) on any path, answered before anything else",
    headers: { "X-Request-Id": REQUEST_ID },
    content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorResponse" } } },
  },
};
const RETRY_AFTER = { $ref: "#/components/headers/RetryAfter" };

function errorResponse(description: string, extraHeaders: Record<string, unknown> = {}) {
  return {
    description,
    headers: { "X-Request-Id": REQUEST_ID, ...extraHeaders },
    content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorResponse" } } },
  };
}

/** Methods whose body the API reads (any body sent with them, even where the route takes none). */
const BODY_METHODS = new Set(["POST", "PUT", "DELETE"]);

/**
 * Answers the HTTP edge and the partner group give whatever the route, with the conditions that make each possible
 * (services/api/test/status-table.test.ts provokes each one on every operation).
 */
function edgeResponses(route: {
  method: string;
  hasBody: boolean;
  /** A query schema, or (partner routes) path parameters: each is checked, 400 when it breaks its rule. */
  checksParameters: boolean;
  isPartner: boolean;
  needsDependencies: boolean;
}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const readsBody = BODY_METHODS.has(route.method);
  if (readsBody || route.checksParameters) {
    out["400"] = errorResponse(
      `A parameter or the body breaks a rule; "error" names the field and the rule${readsBody ? ` (any body sent: valid UTF-8 JSON, at most ${MAX_JSON_DEPTH} levels deep, no control characters or lone surrogates in any string)` : ""}`,
    );
  }
  if (route.isPartner) {
    out["401"] = errorResponse(
      "Missing, malformed, unknown or revoked key (or, for lead counts and for webhook routes naming lead.received, a key without lead-tracking permission); answered before anything about the request's parameters or body, after only the limits of 413, 414 and 431",
    );
    out["429"] = errorResponse(
      "Too many requests for this key (a per-key limit, when the API enforces one); wait Retry-After seconds",
      { "Retry-After": RETRY_AFTER },
    );
  }
  out["413"] = errorResponse(
    `Body larger than ${Limits.maxBodyBytes} bytes (a Content-Length above it is refused whatever the method, before anything else)`,
  );
  if (readsBody) {
    out["415"] = errorResponse(
      "A body whose Content-Type is not application/json, or a Content-Encoding the API does not decode",
    );
  }
  out["414"] = errorResponse("Request target (path and query) too long");
  out["431"] = errorResponse("Request headers too large");
  out["500"] = errorResponse("Unexpected failure; the body carries a requestId to report");
  if (route.needsDependencies) {
    out["503"] = errorResponse(
      "A dependency (the database, or search) is temporarily unavailable, or a write kept colliding with concurrent writes (nothing stored); retry after Retry-After seconds",
      { "Retry-After": RETRY_AFTER },
    );
  }
  return out;
}

function successResponse(schema: unknown, description = "Success") {
  return {
    description,
    headers: { "X-Request-Id": REQUEST_ID },
    content: { "application/json": { schema: documentSchema(schema) } },
  };
}

/** Puts an operation's examples beside the schemas they show: parameters' `example`, each answer's `examples`. */
function addExamples(
  operation: string,
  params: Record<string, unknown>[],
  responses: Record<string, unknown>,
  examples: OperationExamples,
): void {
  for (const param of params) {
    const value =
      param.in === "path"
        ? examples.request.params?.[param.name as string]
        : examples.request.query?.[param.name as string];
    if (value !== undefined) param.example = String(value);
  }
  for (const [status, example] of Object.entries(examples.responses)) {
    const response = responses[status] as { content?: Record<string, Record<string, unknown>> } | undefined;
    const media = response?.content?.["application/json"];
    // An example of an answer the operation does not document is a mistake in the route's docs file.
    if (!media || !example)
      throw new Error(`${operation}: an example of ${status}, which the operation does not answer`);
    // Each response object is built per operation (errorResponse, successResponse), so this changes only this one.
    media.examples = { [status]: { summary: example.summary, value: example.value } };
  }
}

/** Every POST takes one (http/idempotency.ts; docs/partner-api.md, "Idempotency-Key"). */
const IDEMPOTENCY_KEY_PARAMETER = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description: `Send the same request again with the same key (e.g. after a timeout) and it takes effect once: the answer is the first one's (header Idempotent-Replayed: true), kept ${DEFAULT_IDEMPOTENCY_RETENTION_HOURS} hours. Keys are per API key (per client address on public routes). The same key with another request: 422. An error keeps nothing.`,
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7E]+$" },
};

export type OpenApiDocument = ReturnType<typeof buildOpenApiDocument>;

export function buildOpenApiDocument(routes: RouteInfo[], opts: OpenApiOptions) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (
      !opts.documentedPrefixes.some((p) => route.path.startsWith(p)) ||
      route.method === "HEAD" ||
      route.hooks?.detail?.hide
    )
      continue;
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
    const params: Record<string, unknown>[] = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: documentSchema(PathParameters[m[1]!] ?? { type: "string" }),
    }));
    const query = route.hooks?.query as { properties?: Record<string, unknown>; required?: string[] } | undefined;
    for (const [name, schema] of Object.entries(query?.properties ?? {})) {
      params.push({
        name,
        in: "query",
        required: query?.required?.includes(name) ?? false,
        schema: documentSchema(schema),
      });
    }

    if (route.method === "POST") params.push(IDEMPOTENCY_KEY_PARAMETER);
    const isPublic = opts.publicPaths.includes(route.path) || !route.path.startsWith("/partner/");
    const hasBody = route.hooks?.body !== undefined;
    const responses: Record<string, unknown> = edgeResponses({
      method: route.method,
      hasBody,
      checksParameters: query !== undefined || (!isPublic && route.path.includes(":")),
      isPartner: !isPublic,
      needsDependencies: !(opts.dependencyFreePaths ?? []).includes(route.path),
    });
    const validated = (route.hooks?.response ?? {}) as Record<string, unknown>;
    for (const [status, schema] of Object.entries(validated)) {
      responses[status] = status.startsWith("2")
        ? successResponse(schema)
        : errorResponse((responses[status] as { description?: string } | undefined)?.description ?? "Error");
    }
    const documented = (route.hooks?.detail?.responses ?? {}) as DocumentedResponses;
    for (const [status, about] of Object.entries(documented)) {
      // A route's 400 adds to the edge's (which says what every request must obey) rather than replacing it; so
      // does its 429 (a route's own bound, such as the webhook re-send budget, comes on top of the per-key limit).
      const edge = (responses[status] as { description?: string } | undefined)?.description;
      const headers = status === "429" ? { "Retry-After": RETRY_AFTER } : {};
      if (typeof about === "string" && (status === "400" || status === "429") && edge)
        responses[status] = errorResponse(`${edge}. ${about}`, headers);
      else if (typeof about === "string") responses[status] = errorResponse(about, headers);
      else responses[status] = successResponse(about.schema, about.description);
    }
    if (!Object.keys(responses).some((s) => s.startsWith("2"))) responses["200"] = successResponse({ type: "object" });
    if (route.method === "POST") {
      responses["422"] = errorResponse(new IdempotencyKeyReusedError().message);
      const bad = responses["400"] as { description: string } | undefined;
      responses["400"] = errorResponse(`${bad ? `${bad.description}. ` : ""}${IDEMPOTENCY_KEY_RULE}`);
    }

    const examples = route.hooks?.detail?.[EXAMPLES_KEY] as OperationExamples | undefined;
    const requestBody = hasBody
      ? {
          required: true,
          content: {
            "application/json": {
              schema: withTextRules(documentSchema(route.hooks?.body)),
              ...(examples?.request.body !== undefined
                ? { examples: { request: { summary: examples.request.summary, value: examples.request.body } } }
                : {}),
            },
          },
        }
      : undefined;
    if (examples) addExamples(`${route.method} ${path}`, params, responses, examples);
    (paths[path] ??= {})[route.method.toLowerCase()] = {
      summary: route.hooks?.detail?.summary,
      description: route.hooks?.detail?.description,
      parameters: params.length ? params : undefined,
      requestBody,
      responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b))),
      security: isPublic ? [] : undefined,
      ...(examples
        ? {
            "x-codeSamples": [{ lang: "Shell", label: "curl", source: curlOf(route.method, path, examples, isPublic) }],
          }
        : {}),
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Partner Syndication Service",
      version: "1",
      description: `Push business-for-sale listings and broker profiles with idempotent PUTs keyed by your own IDs, and read lead counts. Bodies up to ${Limits.maxBodyBytes} bytes, at most ${MAX_JSON_DEPTH} levels deep; strings must not contain control characters (tab, LF and CR only in multi-line fields: ${[...MULTILINE_TEXT_FIELDS].join(", ")}) or lone surrogates. Every error: {"status":"error","error":"..."} with an X-Request-Id header. A standard method a path does not serve gets 405 with an Allow header (components.responses.MethodNotAllowed), a method outside the standard ones 501 (components.responses.MethodNotImplemented); an unknown path 404. Examples: every operation shows a request (x-codeSamples: curl, with $PSS_API_URL and $PSS_API_KEY) and its answers.`,
    },
    servers: [{ url: opts.serverUrl }],
    security: [{ bearerAuth: [] }],
    components: {
      ...plain(COMPONENTS),
      responses: plain(METHOD_RESPONSES),
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "Authorization: Bearer <API_KEY>" },
      },
    },
    paths,
    // What the service sends to partners' webhook endpoints (register them under /partner/v1/webhook-endpoints).
    webhooks: webhookEventDocs(documentSchema),
  };
}
