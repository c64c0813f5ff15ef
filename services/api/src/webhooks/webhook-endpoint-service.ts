// Create-or-update of a webhook endpoint with the same PUT semantics as listings: a new ID creates (201, and the
// signing secret, shown this once), a known one merges the body onto the stored endpoint (200); an identical
// repeat writes nothing. Reads are not locked: the write is guarded by the version read, a lost race reads again.
import { WebhookErrorMessages, type WebhookEndpointBody } from "@pss/contracts";
import type { SecretBox } from "@pss/service-kit";
import type postgres from "postgres";
import type { Principal } from "../auth/authenticator.ts";
import { ConflictError, UnauthorizedError, validationError } from "../http/errors.ts";
import type { RecordScope } from "../records/record-scope.ts";
import { ContendedWriteError, retryTransaction } from "../records/transaction-retry.ts";
import { applyEndpointBody, missingOnCreate, sameDocument, type EndpointDocument } from "./webhook-endpoint-document.ts";
import { createEndpoint, findEndpoint, updateEndpoint, type StoredEndpoint } from "./webhook-endpoint-repository.ts";
import { generateWebhookSecret } from "./webhook-secrets.ts";

export interface EndpointUpsertResult {
  created: boolean;
  endpoint: StoredEndpoint;
  /** Only when created. */
  secret?: string;
}

const MAX_WRITE_ATTEMPTS = 8;

export async function upsertEndpoint(sql: postgres.Sql, secrets: SecretBox, principal: Principal, externalId: string, body: WebhookEndpointBody): Promise<EndpointUpsertResult> {
  // Lead counts are for keys with lead tracking (spec section 5); lead.received carries the office's count.
  if (body.events?.includes("lead.received") && !principal.leadTracking) throw new UnauthorizedError();
  // The key's mode is the endpoint's: it hears only of records of that mode (docs/webhooks.md, "Test mode").
  return retryTransaction(() => upsertOnce(sql, secrets, { partnerId: principal.partnerId, mode: principal.mode }, externalId, body));
}

async function upsertOnce(sql: postgres.Sql, secrets: SecretBox, scope: RecordScope, externalId: string, body: WebhookEndpointBody): Promise<EndpointUpsertResult> {
  for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
    const current = await findEndpoint(sql, scope, externalId);
    const next = applyEndpointBody(current?.document ?? null, body);
    if (!current) {
      const missing = missingOnCreate(next);
      if (missing.length) throw validationError(missing);
      const secret = generateWebhookSecret();
      const outcome = await createEndpoint(sql, { scope, externalId, document: next as EndpointDocument, secretEncrypted: secrets.encrypt(secret) });
      if ("created" in outcome) return { created: true, endpoint: outcome.created, secret };
      if ("limitReached" in outcome) throw new ConflictError(WebhookErrorMessages.tooManyEndpoints);
      continue;
    }
    const document = next as EndpointDocument;
    if (sameDocument(document, current.document)) return { created: false, endpoint: current };
    const written = await updateEndpoint(sql, current, document);
    if (written) return { created: false, endpoint: written };
  }
  throw new ContendedWriteError();
}
