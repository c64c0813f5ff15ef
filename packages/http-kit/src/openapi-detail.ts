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

/**
 * An operation's examples, declared beside its route (in the feature's *-docs.ts, so they move with the route): one
 * request as a client sends it, and the body of each answer shown. The document shows the request as parameter
 * `example`s, a request body example and a curl command (`x-codeSamples`), and each answer under its status;
 * tests check every example against the schema beside it and send the requests to the real services
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

/** A route's examples, spread into its `detail` (an extension key, read back by the API's buildOpenApiDocument). */
export function withExamples(examples: OperationExamples): object {
  return { [EXAMPLES_KEY]: examples };
}
