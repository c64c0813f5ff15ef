// How a route declares its OpenAPI answers, in any service: the partner API builds its document from them
// (services/api/src/docs/openapi.ts), the marketplace's public JSON routes declare theirs the same way.
import type { DocumentDecoration } from "elysia";

/**
 * Responses a route documents (descriptions, and schemas where the framework does not validate them). Small answers
 * also declare `response:` (validated, and typed against the handler); the large read models (listings, brokers,
 * their pages and histories, buyer search, the feed's pre-serialised page, reports) are documented here only, so
 * they are not re-checked per request.
 */
export type DocumentedResponses = Record<number, string | { description: string; schema: unknown }>;

/**
 * A route's `detail.responses`: our own shape (read back by the API's buildOpenApiDocument), where Elysia's type
 * expects finished OpenAPI response objects. The one cast between the two.
 */
export function documented(responses: DocumentedResponses): DocumentDecoration["responses"] {
  return responses as unknown as DocumentDecoration["responses"];
}
