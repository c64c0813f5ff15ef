// Create-or-update of a webhook endpoint with the same PUT semantics as listings: a new ID creates (201, and the
// signing secret, shown this once), a known one merges the body onto the stored endpoint (200); an identical
// repeat writes nothing. Reads are not locked: the write is guarded by the version read, a lost race reads again.
import { WebhookErrorMessages, type WebhookEndpointBody } from "@pss/contracts";
import type { SecretBox } from "@pss/service-kit";
import type postgres from "postgres";
import type { Principal } from "../auth/authenticator.ts";
import { ConflictError, NotFoundError, validationError } from "../http/errors.ts";
import { ContendedWriteError, retryTransaction } from "../records/transaction-retry.ts";
import {
  applyEndpointBody,
  missingOnCreate,
  sameDocument,
  type EndpointDocument,
} from "./webhook-endpoint-document.ts";
import { webhookScopeOf } from "./lead-data-rule.ts";
import {
  createEndpoint,
  findEndpoint,
  updateEndpoint,
  type StoredEndpoint,
  type WebhookScope,
} from "./webhook-endpoint-repository.ts";
import { generateWebhookSecret } from "./webhook-secrets.ts";

export interface EndpointUpsertResult {
  created: boolean;
  endpoint: StoredEndpoint;
  /** Only when created. */
  secret?: string;
}

const MAX_WRITE_ATTEMPTS = 8;

export async function upsertEndpoint(
  sql: postgres.Sql,
  secrets: SecretBox,
  principal: Principal,
  externalId: string,
  body: WebhookEndpointBody,
): Promise<EndpointUpsertResult> {
  // Who may subscribe to lead.received or change an endpoint that carries lead data is the router's guard's
  // (lead-data-rule.ts). The key's mode is the endpoint's: it hears only of records of that mode (docs/webhooks.md,
  // "Test mode"); an endpoint carrying lead data is outside the scope of a key without lead tracking.
  return retryTransaction(() => upsertOnce(sql, secrets, webhookScopeOf(principal), externalId, body));
}

async function upsertOnce(
  sql: postgres.Sql,
  secrets: SecretBox,
  scope: WebhookScope,
  externalId: string,
  body: WebhookEndpointBody,
): Promise<EndpointUpsertResult> {
  for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
    const current = await findEndpoint(sql, scope, externalId);
    const next = applyEndpointBody(current?.document ?? null, body);
    if (!current) {
      const missing = missingOnCreate(next);
      if (missing.length) throw validationError(missing);
      const secret = generateWebhookSecret();
      const outcome = await createEndpoint(sql, {
        scope,
        externalId,
        document: next as EndpointDocument,
        secretEncrypted: secrets.encrypt(secret),
      });
      if ("created" in outcome) return { created: true, endpoint: outcome.created, secret };
      if ("limitReached" in outcome) throw new ConflictError(WebhookErrorMessages.tooManyEndpoints);
      // Taken meanwhile, or by an endpoint outside this key's scope (one that carries lead data): that one answers as
      // every route answers an unknown ID for this key. Only a create can tell the ID is taken (docs/webhooks.md).
      if (!scope.leadData && (await findEndpoint(sql, { ...scope, leadData: true }, externalId))?.carriesLeadData)
        throw new NotFoundError(WebhookErrorMessages.endpointNotFound);
      continue;
    }
    const document = next as EndpointDocument;
    if (sameDocument(document, current.document)) return { created: false, endpoint: current };
    const outcome = await updateEndpoint(sql, scope, current, document);
    if (outcome && "limitReached" in outcome) throw new ConflictError(WebhookErrorMessages.tooManyEndpoints);
    if (outcome) return { created: false, endpoint: outcome };
  }
  throw new ContendedWriteError();
}
