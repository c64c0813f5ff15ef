// SQL of the partner's webhook endpoints. Writes are single statements guarded by the version that was read
// (like listings), so a lost race reads again; creation (and a first subscription to lead.received) is serialised
// per partner and mode to keep the endpoint limit.
// Every statement is scoped by partner and mode (docs/sandbox.md): a test key sees and manages only the endpoints
// it created, which receive only test records' events; a live key likewise. The limit counts per mode.
// The scope also carries the lead-data rule (lead-data-rule.ts): for a key without lead tracking, endpoints that
// carry lead data are not in its scope, so no statement here reads, changes or re-sends them for such a key.
import {
  MAX_WEBHOOK_ENDPOINTS,
  SECRET_ROTATION_OVERLAP_MS,
  type WebhookEndpointRecord,
  type WebhookEventType,
} from "@pss/contracts";
import type postgres from "postgres";
import type { RecordScope } from "../records/record-scope.ts";
import type { EndpointDocument } from "./webhook-endpoint-document.ts";
import { LEAD_EVENT } from "./lead-data-rule.ts";

type Sql = postgres.Sql | postgres.TransactionSql;

/** The key's partner and mode, and whether it may touch endpoints that carry lead data (its lead tracking). */
export interface WebhookScope extends RecordScope {
  leadData: boolean;
}

export interface StoredEndpoint {
  id: string;
  externalId: string;
  document: EndpointDocument;
  version: number;
  disabledReason: string | null;
  disabledAt: Date | null;
  failingSince: Date | null;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  /** Subscribed to lead.received now or at any time before (lead-data-rule.ts). */
  carriesLeadData: boolean;
}

/** What the partner reads when they disable an endpoint themselves. */
export const DISABLED_BY_PARTNER = 'disabled by the partner (a PUT with "enabled": false)';

const COLUMNS = (sql: Sql) => sql`
  id::text, COALESCE(shown_external_id, external_id) AS external_id, url, events, description, enabled, version, disabled_reason, disabled_at, failing_since,
  CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END AS previous_secret_expires_at, created_at, updated_at, carries_lead_data`;

function toStored(r: postgres.Row): StoredEndpoint {
  return {
    id: r.id,
    externalId: r.external_id,
    document: { url: r.url, events: r.events as WebhookEventType[], description: r.description, enabled: r.enabled },
    version: r.version,
    disabledReason: r.disabled_reason,
    disabledAt: r.disabled_at,
    failingSince: r.failing_since,
    previousSecretExpiresAt: r.previous_secret_expires_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    carriesLeadData: r.carries_lead_data,
  };
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toEndpointRecord(e: StoredEndpoint): WebhookEndpointRecord {
  return {
    endpointId: e.externalId,
    url: e.document.url,
    events: e.document.events,
    description: e.document.description,
    enabled: e.document.enabled,
    disabledReason: e.document.enabled ? null : e.disabledReason,
    disabledAt: e.document.enabled ? null : iso(e.disabledAt),
    failingSince: iso(e.failingSince),
    previousSecretExpiresAt: iso(e.previousSecretExpiresAt),
    version: e.version,
    createdAt: e.createdAt.toISOString(),
    updatedAt: e.updatedAt.toISOString(),
  };
}

/** The partner's and mode's endpoints (alias `e` or none), whatever the key's lead tracking. */
const inPartnerMode = (sql: Sql, scope: RecordScope, alias = "") => {
  const p = alias ? `${alias}.` : "";
  return sql`${sql.unsafe(`${p}partner_id`)} = ${scope.partnerId} AND ${sql.unsafe(`${p}mode`)} = ${scope.mode}`;
};

/** The scope's condition on webhook_endpoints (alias `e` or none): the partner's and mode's endpoints the key may touch. */
export const inScope = (sql: Sql, scope: WebhookScope, alias = "") => {
  const p = alias ? `${alias}.` : "";
  return scope.leadData
    ? inPartnerMode(sql, scope, alias)
    : sql`${inPartnerMode(sql, scope, alias)} AND NOT ${sql.unsafe(`${p}carries_lead_data`)}`;
};

/**
 * The endpoint the key names by `externalId` (a condition on webhook_endpoints as `alias`): IDs are per audience
 * (migration 0035), so a key with lead tracking may see two endpoints of one ID; it names the one carrying lead data.
 */
export const endpointNamed = (sql: Sql, scope: WebhookScope, externalId: string, alias = "e") =>
  sql`${sql.unsafe(`${alias}.id`)} = (
    SELECT n.id FROM webhook_endpoints n
    WHERE ${inScope(sql, scope, "n")} AND (n.external_id = ${externalId} OR n.shown_external_id = ${externalId})
    ORDER BY n.carries_lead_data DESC LIMIT 1)`;

export async function findEndpoint(sql: Sql, scope: WebhookScope, externalId: string): Promise<StoredEndpoint | null> {
  const [row] =
    await sql`SELECT ${COLUMNS(sql)} FROM webhook_endpoints e WHERE ${endpointNamed(sql, scope, externalId)}`;
  return row ? toStored(row) : null;
}

// ORDER BY names the table's column: a bare `id` is the text output column (`id::text`), which sorts "10" before "9".
export async function pageEndpoints(
  sql: Sql,
  scope: WebhookScope,
  afterId: string | null,
  limit: number,
): Promise<StoredEndpoint[]> {
  const rows = await sql`
    SELECT ${COLUMNS(sql)} FROM webhook_endpoints
    WHERE ${inScope(sql, scope)} ${afterId ? sql`AND id > ${afterId}::bigint` : sql``}
    ORDER BY webhook_endpoints.id LIMIT ${limit}`;
  return rows.map(toStored);
}

/**
 * The endpoint limit (docs/webhooks.md "Lead data"): a key creates an endpoint while it can see fewer than
 * MAX_WEBHOOK_ENDPOINTS (a key without lead tracking does not count endpoints carrying lead data, which it must not
 * learn of), and an endpoint starts carrying lead data only while fewer than MAX_WEBHOOK_ENDPOINTS do. So a
 * partner has at most that many of each kind per mode, whichever keys create them.
 */
const lockEndpointCount = (tx: postgres.TransactionSql, scope: RecordScope) =>
  tx`SELECT pg_advisory_xact_lock(hashtextextended(${`pss.webhook-endpoints:${scope.partnerId}:${scope.mode}`}, 0))`;

async function countEndpoints(tx: postgres.TransactionSql, where: postgres.PendingQuery<postgres.Row[]>) {
  const [{ n }] = (await tx`SELECT count(*)::int AS n FROM webhook_endpoints WHERE ${where}`) as unknown as [
    { n: number },
  ];
  return n;
}

export type CreateOutcome = { created: StoredEndpoint } | { raced: true } | { limitReached: true };

/** The private external_id of an endpoint whose ID an endpoint of the other audience holds (migration 0035). */
const privateExternalId = (externalId: string) => `${externalId}\u001f${crypto.randomUUID()}`;

/**
 * Creates the endpoint unless the ID was taken meanwhile (in this key's view) or the partner already has the most
 * endpoints allowed. An ID only an endpoint this key cannot see holds (one carrying lead data, for a key without
 * lead tracking) is free for it: its endpoint is stored under a private external_id and shows the ID it was given.
 */
export async function createEndpoint(
  sql: postgres.Sql,
  args: { scope: WebhookScope; externalId: string; document: EndpointDocument; secretEncrypted: string },
): Promise<CreateOutcome> {
  const { scope } = args;
  return sql.begin(async (tx): Promise<CreateOutcome> => {
    // One creation per partner and mode at a time, so the count below is exact.
    await lockEndpointCount(tx, scope);
    // The endpoints this key can see: a key without lead tracking must not learn of the others by a 409.
    if ((await countEndpoints(tx, inScope(tx, scope))) >= MAX_WEBHOOK_ENDPOINTS) return { limitReached: true };
    const holders = await tx`
      SELECT carries_lead_data, external_id = ${args.externalId} AS plain FROM webhook_endpoints
      WHERE ${inPartnerMode(tx, scope)} AND (external_id = ${args.externalId} OR shown_external_id = ${args.externalId})`;
    if (holders.some((h) => scope.leadData || !h.carries_lead_data)) return { raced: true };
    const stored = holders.some((h) => h.plain) ? privateExternalId(args.externalId) : args.externalId;
    const d = args.document;
    const [row] = await tx`
      INSERT INTO webhook_endpoints (partner_id, mode, external_id, shown_external_id, url, events, description, enabled, disabled_cause, disabled_reason, disabled_at, secret_encrypted, carries_lead_data)
      VALUES (${scope.partnerId}, ${scope.mode}, ${stored}, ${stored === args.externalId ? null : args.externalId}, ${d.url}, ${d.events}::text[], ${d.description}, ${d.enabled},
              ${d.enabled ? null : "partner"}, ${d.enabled ? null : DISABLED_BY_PARTNER}, ${d.enabled ? null : tx`now()`}, ${args.secretEncrypted},
              ${d.events.includes(LEAD_EVENT)})
      ON CONFLICT (partner_id, mode, external_id) DO NOTHING
      RETURNING ${COLUMNS(tx)}`;
    return row ? { created: toStored(row) } : { raced: true };
  });
}

/**
 * Writes the new document if the endpoint is still at `expectedVersion`; null when it changed meanwhile. Enabling
 * clears why it was disabled and its failure streak; disabling fails its pending deliveries (recover sends them
 * again once it is enabled); a new URL starts a new failure streak. Subscribing to lead.received for the first time
 * needs `newSecretEncrypted`: the secret is replaced at once, without the rotation's overlap (a key without lead
 * tracking may know the old one).
 */
export async function updateEndpoint(
  sql: postgres.Sql,
  scope: WebhookScope,
  current: StoredEndpoint,
  document: EndpointDocument,
  newSecretEncrypted?: string,
): Promise<StoredEndpoint | { limitReached: true } | null> {
  if (current.carriesLeadData || !document.events.includes(LEAD_EVENT)) return writeEndpoint(sql, current, document);
  // Subscribing to lead.received for the first time: the limit of endpoints carrying lead data, and a new secret.
  if (newSecretEncrypted === undefined) throw new Error("a first subscription to lead.received needs a new secret");
  return sql.begin(async (tx) => {
    await lockEndpointCount(tx, scope);
    if ((await countEndpoints(tx, tx`${inPartnerMode(tx, scope)} AND carries_lead_data`)) >= MAX_WEBHOOK_ENDPOINTS)
      return { limitReached: true as const };
    return writeEndpoint(tx, current, document, newSecretEncrypted);
  });
}

async function writeEndpoint(
  sql: Sql,
  current: StoredEndpoint,
  document: EndpointDocument,
  newSecretEncrypted?: string,
): Promise<StoredEndpoint | null> {
  const enabling = document.enabled && !current.document.enabled;
  const disabling = !document.enabled && current.document.enabled;
  // Re-enabling, or a new URL, starts a new failure streak (one assignment: both may come in one PUT).
  const newStreak = enabling || document.url !== current.document.url;
  const [row] = await sql`
    WITH u AS (
      UPDATE webhook_endpoints SET url = ${document.url}, events = ${document.events}::text[], description = ${document.description},
        enabled = ${document.enabled},
        ${enabling ? sql`disabled_cause = NULL, disabled_reason = NULL, disabled_at = NULL,` : sql``}
        ${disabling ? sql`disabled_cause = 'partner', disabled_reason = ${DISABLED_BY_PARTNER}, disabled_at = now(),` : sql``}
        ${newStreak ? sql`failing_since = NULL,` : sql``}
        ${
          newSecretEncrypted !== undefined
            ? sql`secret_encrypted = ${newSecretEncrypted}, previous_secret_encrypted = NULL, previous_secret_expires_at = NULL,`
            : sql``
        }
        carries_lead_data = carries_lead_data OR ${document.events.includes(LEAD_EVENT)},
        version = version + 1, updated_at = now()
      WHERE id = ${current.id}::bigint AND version = ${current.version}
      RETURNING ${COLUMNS(sql)}
    ), failed AS (
      UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, last_error = ${`endpoint disabled: ${DISABLED_BY_PARTNER}`}
      WHERE ${disabling} AND endpoint_id IN (SELECT id::bigint FROM u) AND status = 'pending'
    )
    SELECT * FROM u`;
  return row ? toStored(row) : null;
}

export async function deleteEndpoint(sql: Sql, scope: WebhookScope, externalId: string): Promise<boolean> {
  const rows =
    await sql`DELETE FROM webhook_endpoints e WHERE ${inScope(sql, scope, "e")} AND ${endpointNamed(sql, scope, externalId)} RETURNING id`;
  return rows.length > 0;
}

/** The new secret replaces the current one, which keeps signing for the overlap. Null when there is no such endpoint. */
export async function rotateSecret(
  sql: Sql,
  scope: WebhookScope,
  externalId: string,
  secretEncrypted: string,
): Promise<{ previousSecretExpiresAt: Date } | null> {
  const [row] = await sql`
    UPDATE webhook_endpoints e SET previous_secret_encrypted = secret_encrypted, secret_encrypted = ${secretEncrypted},
      previous_secret_expires_at = now() + ${SECRET_ROTATION_OVERLAP_MS}::bigint * interval '1 millisecond', version = version + 1, updated_at = now()
    WHERE ${inScope(sql, scope, "e")} AND ${endpointNamed(sql, scope, externalId)}
    RETURNING previous_secret_expires_at`;
  return row ? { previousSecretExpiresAt: row.previous_secret_expires_at } : null;
}
