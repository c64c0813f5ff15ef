// Create-or-update of a webhook endpoint with the same PUT semantics as listings: a new ID creates (201, and the
// signing secret, shown this once), a known one merges the body onto the stored endpoint (200); an identical
// repeat writes nothing. Reads are not locked: the write is guarded by the version read, a lost race reads again.
import { WebhookErrorMessages, type WebhookEndpointBody } from "@pss/contracts";
import type { SecretBox } from "@pss/service-kit";
import type postgres from "postgres";
import type { Principal } from "../auth/authenticator.ts";
import { ConflictError, validationError } from "../http/errors.ts";
import { ContendedWriteError, retryTransaction } from "../records/transaction-retry.ts";
import {
  applyEndpointBody,
  missingOnCreate,
  sameDocument,
  type EndpointDocument,
} from "./webhook-endpoint-document.ts";
import { LEAD_EVENT, webhookScopeOf } from "./lead-data-rule.ts";
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
  /** Only when created, or subscribed to lead.received for the first time (a new secret). */
  secret?: string;
}

/** A first subscription to lead.received names the URL (lead data goes where a key with lead tracking says). */
const LEAD_URL_REQUIRED = {
  path: "url",
  message:
    "must be given when the endpoint is subscribed to lead.received for the first time: lead data goes only to a URL a key with lead tracking set (the answer carries a new secret)",
};

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
      // Taken meanwhile in this key's view (an ID only an endpoint it cannot see holds is free for it, migration
      // 0035): read it again.
      continue;
    }
    const document = next as EndpointDocument;
    if (sameDocument(document, current.document)) return { created: false, endpoint: current };
    // Becoming an endpoint that carries lead data: its URL and secret may have been chosen by a key without lead
    // tracking, so this request states the URL and the endpoint gets a new secret, shown in this answer.
    const gainsLeadData = !current.carriesLeadData && document.events.includes(LEAD_EVENT);
    if (gainsLeadData && body.url === undefined) throw validationError([LEAD_URL_REQUIRED]);
    const secret = gainsLeadData ? generateWebhookSecret() : undefined;
    const outcome = await updateEndpoint(
      sql,
      scope,
      current,
      document,
      secret === undefined ? undefined : secrets.encrypt(secret),
    );
    if (outcome && "limitReached" in outcome) throw new ConflictError(WebhookErrorMessages.tooManyEndpoints);
    if (outcome) return { created: false, endpoint: outcome, ...(secret === undefined ? {} : { secret }) };
  }
  throw new ContendedWriteError();
}
