// Partnership setup: partners, their API keys, offices and broker-office assignments. Used by the admin CLI;
// receives its clients so it never reads the environment or owns a connection.
import type Redis from "ioredis";
import type postgres from "postgres";
import { authCacheKey, authGenerationKey, generateApiKey, hashApiKey, keyPrefix } from "../auth/api-key.ts";
import { AUTH_CACHE_TTL_SECONDS } from "../auth/authenticator.ts";
import { retryTransaction } from "../records/transaction-retry.ts";

export type AdminErrorCode = "invalid_argument" | "not_found";

/** A failure meant for a human operator: the message is printed as is, never a stack trace. */
export class AdminError extends Error {
  constructor(
    readonly code: AdminErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "AdminError";
  }
}

export interface PartnerAdminDeps {
  sql: postgres.Sql;
  /** May be created lazily: it is connected only when a revocation needs to clear the auth cache. */
  redis: Redis;
}

export interface CreatedPartner {
  partnerId: string;
  apiKey: string;
  organizationId: number;
  officeId: number;
}

export interface RevokeResult {
  revoked: true;
  /** Set when the auth cache could not be cleared: the key is revoked but may authenticate until the entry expires. */
  cacheWarning?: string;
}

/**
 * How long a revocation's generation bump is kept: far longer than any lookup takes between reading the
 * generation and writing its cache entry (then the key reads as revoked from PostgreSQL anyway).
 */
const REVOCATION_GENERATION_TTL_SECONDS = 24 * 3600;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_INT4 = 2_147_483_647;

// Checked here rather than left to Postgres so a typo gives one clear line instead of a driver error.
function requireUuid(value: string, what: string): string {
  if (!UUID.test(value)) throw new AdminError("invalid_argument", `${what} must be a UUID, got '${value}'`);
  return value.toLowerCase();
}

function requireId(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 1 || value > MAX_INT4) {
    throw new AdminError("invalid_argument", `${what} must be a positive integer, got '${value}'`);
  }
  return value;
}

function requireName(value: string, what: string): string {
  const name = value.trim();
  if (name === "") throw new AdminError("invalid_argument", `${what} must not be empty`);
  return name;
}

export function createPartnerAdmin({ sql, redis }: PartnerAdminDeps) {
  async function insertKey(tx: postgres.Sql | postgres.TransactionSql, partnerId: string, leadTracking: boolean) {
    const apiKey = generateApiKey();
    // INSERT ... SELECT: no row comes back when the partner does not exist, so existence and insert are one statement.
    const rows = await tx<{ id: string }[]>`
      INSERT INTO api_keys (partner_id, key_hash, key_prefix, lead_tracking)
      SELECT id, ${hashApiKey(apiKey)}, ${keyPrefix(apiKey)}, ${leadTracking} FROM partners WHERE id = ${partnerId}
      RETURNING id`;
    if (rows.length === 0) throw new AdminError("not_found", `partner ${partnerId} not found`);
    return apiKey;
  }

  async function dropAuthCacheEntry(hash: Buffer): Promise<string | undefined> {
    // The connect() rejection only says "Connection is closed"; the error event carries the real cause.
    let lastError: Error | undefined;
    const onError = (err: Error) => {
      lastError = err;
    };
    redis.on("error", onError);
    try {
      if (redis.status === "wait") await redis.connect();
      // Bump the generation first (same transaction): a lookup that read the key before the revocation and
      // writes its entry after this point is refused by the authenticator's conditional write.
      const generationKey = authGenerationKey(hash);
      const results = await redis.multi().incr(generationKey).expire(generationKey, REVOCATION_GENERATION_TTL_SECONDS).del(authCacheKey(hash)).exec();
      const failed = results?.find(([err]) => err)?.[0];
      if (!results || failed) throw failed ?? new Error("Redis transaction aborted");
      return undefined;
    } catch (err) {
      const reason = lastError?.message || (err instanceof Error ? err.message : String(err));
      return `could not clear the auth cache in Redis (${reason}); the key is revoked in the database but may still authenticate for up to ${AUTH_CACHE_TTL_SECONDS} s until its cache entry expires`;
    } finally {
      redis.off("error", onError);
    }
  }

  return {
    /** Partner, its organization, the default office and a first API key, all or nothing. */
    async createPartner(input: { name: string; leadTracking?: boolean }): Promise<CreatedPartner> {
      const name = requireName(input.name, "partner name");
      return sql.begin(async (tx) => {
        const [partner] = await tx<{ id: string }[]>`INSERT INTO partners (name) VALUES (${name}) RETURNING id`;
        const partnerId = partner!.id;
        const [org] = await tx<{ id: number }[]>`
          INSERT INTO organizations (partner_id, name) VALUES (${partnerId}, ${name}) RETURNING id`;
        const [office] = await tx<{ id: number }[]>`
          INSERT INTO offices (organization_id, name, is_default) VALUES (${org!.id}, ${`${name} main office`}, true) RETURNING id`;
        const apiKey = await insertKey(tx, partnerId, input.leadTracking ?? false);
        return { partnerId, apiKey, organizationId: org!.id, officeId: office!.id };
      });
    },

    async createKey(input: { partnerId: string; leadTracking?: boolean }): Promise<{ apiKey: string }> {
      const partnerId = requireUuid(input.partnerId, "partner id");
      return { apiKey: await insertKey(sql, partnerId, input.leadTracking ?? false) };
    },

    /** Idempotent: revoking again keeps the first revoked_at and still clears the cache. */
    async revokeKey(input: { partnerId: string; apiKey: string }): Promise<RevokeResult> {
      const partnerId = requireUuid(input.partnerId, "partner id");
      const hash = hashApiKey(input.apiKey);
      const rows = await sql<{ id: string }[]>`
        UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
        WHERE key_hash = ${hash} AND partner_id = ${partnerId}
        RETURNING id`;
      if (rows.length === 0) throw new AdminError("not_found", "key not found for this partner");
      // Only once the UPDATE has committed: deleting earlier would let a concurrent lookup re-cache the still-valid row.
      const cacheWarning = await dropAuthCacheEntry(hash);
      return cacheWarning ? { revoked: true, cacheWarning } : { revoked: true };
    },

    async createOffice(input: { organizationId: number; name: string }): Promise<{ officeId: number }> {
      const organizationId = requireId(input.organizationId, "organization id");
      const name = requireName(input.name, "office name");
      const rows = await sql<{ id: number }[]>`
        INSERT INTO offices (organization_id, name)
        SELECT id, ${name} FROM organizations WHERE id = ${organizationId}
        RETURNING id`;
      if (rows.length === 0) throw new AdminError("not_found", `organization ${organizationId} not found`);
      return { officeId: rows[0]!.id };
    },

    /** Moves a broker to another office of the same partner; leads read office_id when they are created. */
    async assignBrokerOffice(input: { partnerId: string; externalBrokerId: string; officeId: number }): Promise<{ ok: true }> {
      const partnerId = requireUuid(input.partnerId, "partner id");
      const officeId = requireId(input.officeId, "office id");
      const externalId = input.externalBrokerId;
      if (externalId.trim() === "") throw new AdminError("invalid_argument", "external broker id must not be empty");
      return retryTransaction(() => sql.begin(async (tx) => {
        const [partner] = await tx`SELECT 1 FROM partners WHERE id = ${partnerId}`;
        if (!partner) throw new AdminError("not_found", `partner ${partnerId} not found`);
        // A broker must never point at another partner's office: that would leak its leads across partners.
        const [office] = await tx`
          SELECT 1 FROM offices o JOIN organizations g ON g.id = o.organization_id
          WHERE o.id = ${officeId} AND g.partner_id = ${partnerId}`;
        if (!office) throw new AdminError("not_found", `office ${officeId} not found for this partner`);
        const updated = await tx`
          UPDATE brokers SET office_id = ${officeId}, updated_at = now()
          WHERE partner_id = ${partnerId} AND external_id = ${externalId}
          RETURNING id`;
        if (updated.length === 0) throw new AdminError("not_found", "broker not found");
        return { ok: true as const };
      }));
    },
  };
}

export type PartnerAdmin = ReturnType<typeof createPartnerAdmin>;
