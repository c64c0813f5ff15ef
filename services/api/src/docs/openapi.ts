// OpenAPI 3.1 built from the routes themselves: the TypeBox schemas that validate requests are JSON Schema,
// so the document cannot drift from what the API enforces.
import { ErrorResponse, Limits } from "@pss/contracts";

interface RouteInfo {
  method: string;
  path: string;
  hooks?: { body?: unknown; query?: unknown; response?: Record<string, unknown> | unknown; detail?: { summary?: string; description?: string } };
}

const plain = (schema: unknown) => JSON.parse(JSON.stringify(schema));

export type OpenApiDocument = ReturnType<typeof buildOpenApiDocument>;

export function buildOpenApiDocument(routes: RouteInfo[], opts: { serverUrl: string; documentedPrefixes: string[]; publicPaths: string[] }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (!opts.documentedPrefixes.some((p) => route.path.startsWith(p)) || route.method === "HEAD") continue;
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
    const params = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
    const query = route.hooks?.query as { properties?: Record<string, unknown> } | undefined;
    for (const [name, schema] of Object.entries(query?.properties ?? {})) params.push({ name: name as string, in: "query", required: false, schema: plain(schema) });
    const responses: Record<string, unknown> = {};
    const declared = (route.hooks?.response ?? {}) as Record<string, unknown>;
    for (const [status, schema] of Object.entries(declared)) {
      responses[status] = { description: status.startsWith("2") ? "Success" : "Error", content: { "application/json": { schema: plain(schema) } } };
    }
    if (Object.keys(responses).length === 0) responses["200"] = { description: "Success", content: { "application/json": { schema: { type: "object" } } } };
    const isPublic = opts.publicPaths.includes(route.path) || !route.path.startsWith("/partner/");
    if (!isPublic) responses["401"] ??= { description: "Missing, malformed, unknown or revoked key", content: { "application/json": { schema: plain(ErrorResponse) } } };
    (paths[path] ??= {})[route.method.toLowerCase()] = {
      summary: route.hooks?.detail?.summary,
      description: route.hooks?.detail?.description,
      parameters: params.length ? params : undefined,
      requestBody: route.hooks?.body ? { required: true, content: { "application/json": { schema: plain(route.hooks.body) } } } : undefined,
      responses,
      security: isPublic ? [] : undefined,
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Partner Syndication Service",
      version: "1",
      description: `Push business-for-sale listings and broker profiles with idempotent PUTs keyed by your own IDs, and read lead counts. Bodies up to ${Limits.maxBodyBytes} bytes. Every error: {"status":"error","error":"..."}.`,
    },
    servers: [{ url: opts.serverUrl }],
    security: [{ bearerAuth: [] }],
    components: { securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "Authorization: Bearer <API_KEY>" } } },
    paths,
  };
}
