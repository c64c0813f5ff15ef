// The OpenAPI prose shared by the batch routes (batch-route.ts). The document (GET /partner/v1/openapi.json) shows
// each text exactly as written here.
import { BATCH_MAX_ITEMS } from "@pss/contracts";

/** The 400 of a batch refused whole. */
export const BATCH_REFUSED =
  "The batch itself is malformed (nothing written): a rule beyond the schema (see the description) is " +
  "refused with details [{path, message}] naming each item that breaks it.";

export const BATCH_ABOUT =
  `Each item is its own unit with exactly the single PUT's semantics and answer: results[i] carries the ` +
  `status (httpStatus) and body the PUT of items[i] would have got, in request order; one bad item ` +
  `never fails the others. The request itself is refused whole (400, 413; nothing written) when it is ` +
  `not JSON, breaks the envelope's schema, has more than ${BATCH_MAX_ITEMS} items or more than the body ` +
  `limit, or names an external ID twice. Rules beyond the schema (400 for the whole batch, with details ` +
  `[{path, message}] naming each repeat, e.g. items[1].externalListingId): an external ID may appear ` +
  `once per batch. Rate limiting counts every item: items past the key's remaining budget are answered ` +
  `429 (and the answer carries Retry-After). With ?dryRun=true every item is checked and compared as ` +
  `the single PUT's dry run does (each on its own, against the records as stored), and nothing is ` +
  `written or announced.`;
