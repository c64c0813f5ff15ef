// Partnership setup: partners, their API keys, offices and broker-office assignments. Used by the admin CLI;
// receives its clients so it never reads the environment or owns a connection.
import type Redis from "ioredis";
import type postgres from "postgres";
import type { RecordMode } from "@pss/contracts";
import {
  authCacheKey,
  authGenerationKey,
  generateApiKey,
  hashApiKey,
  keyPrefix,
  AUTH_CACHE_TTL_SECONDS,
  retryTransaction,
} from "@pss/http-kit";

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
  /** The plaintext key: shown this once, only its hash is stored. */
  apiKey: string;
  /** What `keys list` and `keys revoke --key-id` name the key by. */
  keyId: string;
  organizationId: number;
  officeId: number;
  /** With `test`: a test key (pss_test_…) beside the live one, also shown this once. */
  testApiKey?: string;
  testKeyId?: string;
}

export interface PartnerSummary {
  partnerId: string;
  name: string;
  createdAt: Date;
  activeKeys: number;
}

export interface KeySummary {
  keyId: string;
  partnerId: string;
  /** The first characters of the key (never the key): enough to tell keys apart. */
  prefix: string;
  /** From the prefix: `live` (pss_live_…); `test` for pss_test_… keys. */
  mode: "live" | "test";
  createdAt: Date;
  /** Updated at most once a minute per key and API process; null: not used since it was recorded. */
  lastUsedAt: Date | null;
  leadTracking: boolean;
  revoked: boolean;
  revokedAt: Date | null;
}

export interface OfficeSummary {
  officeId: number;
  organizationId: number;
  partnerId: string;
  name: string;
  isDefault: boolean;
  brokers: number;
  createdAt: Date;
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

/** Rows a list command returns at most. */
export const MAX_LIST = 10_000;

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

export function keyMode(prefix: string): "live" | "test" {
  return prefix.startsWith("pss_test_") ? "test" : "live";
}

function requireLimit(value: number | undefined, fallback = 1000): number {
  const limit = value ?? fallback;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST)
    throw new AdminError("invalid_argument", `limit must be between 1 and ${MAX_LIST}, got '${value}'`);
  return limit;
}

function requireName(value: string, what: string): string {
  const name = value.trim();
  if (name === "") throw new AdminError("invalid_argument", `${what} must not be empty`);
  return name;
}

export function createPartnerAdmin({ sql, redis }: PartnerAdminDeps) {
  async function insertKey(
    tx: postgres.Sql | postgres.TransactionSql,
    partnerId: string,
    leadTracking: boolean,
    mode: RecordMode = "live",
  ) {
    // The mode is not stored separately: api_keys.mode is derived from the prefix.
    const apiKey = generateApiKey(mode);
    // INSERT ... SELECT: no row comes back when the partner does not exist, so existence and insert are one statement.
    const rows = await tx<{ id: string }[]>`
      INSERT INTO api_keys (partner_id, key_hash, key_prefix, lead_tracking)
      SELECT id, ${hashApiKey(apiKey)}, ${keyPrefix(apiKey)}, ${leadTracking} FROM partners WHERE id = ${partnerId}
      RETURNING id::text AS id`;
    if (rows.length === 0) throw new AdminError("not_found", `partner ${partnerId} not found`);
    return { apiKey, keyId: rows[0]!.id };
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
      const results = await redis
        .multi()
        .incr(generationKey)
        .expire(generationKey, REVOCATION_GENERATION_TTL_SECONDS)
        .del(authCacheKey(hash))
        .exec();
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

  async function revoke(input: {
    keyId?: string;
    apiKey?: string;
    partnerId?: string;
  }): Promise<RevokeResult & { keyId: string }> {
    const partnerId = input.partnerId === undefined ? undefined : requireUuid(input.partnerId, "partner id");
    if ((input.keyId === undefined) === (input.apiKey === undefined))
      throw new AdminError("invalid_argument", "name the key by its id or give the key itself, not both");
    let match: postgres.Fragment;
    if (input.keyId !== undefined) {
      if (!/^[1-9][0-9]{0,17}$/.test(input.keyId))
        throw new AdminError("invalid_argument", `key id must be a positive integer, got '${input.keyId}'`);
      match = sql`id = ${input.keyId}::bigint`;
    } else {
      match = sql`key_hash = ${hashApiKey(input.apiKey!.trim())}`;
    }
    const rows = await sql<{ id: string; key_hash: Buffer }[]>`
      UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
      WHERE ${match} ${partnerId ? sql`AND partner_id = ${partnerId}` : sql``}
      RETURNING id::text AS id, key_hash`;
    if (rows.length === 0)
      throw new AdminError("not_found", partnerId ? "key not found for this partner" : "key not found");
    // Only once the UPDATE has committed: deleting earlier would let a concurrent lookup re-cache the still-valid row.
    const cacheWarning = await dropAuthCacheEntry(rows[0]!.key_hash);
    const keyId = rows[0]!.id;
    return cacheWarning ? { revoked: true, keyId, cacheWarning } : { revoked: true, keyId };
  }

  return {
    /** Partner, its organization, the default office and a first API key (and with `test` a test key), all or nothing. */
    async createPartner(input: { name: string; leadTracking?: boolean; test?: boolean }): Promise<CreatedPartner> {
      const name = requireName(input.name, "partner name");
      return sql.begin(async (tx) => {
        const [partner] = await tx<{ id: string }[]>`INSERT INTO partners (name) VALUES (${name}) RETURNING id`;
        const partnerId = partner!.id;
        const [org] = await tx<{ id: number }[]>`
          INSERT INTO organizations (partner_id, name) VALUES (${partnerId}, ${name}) RETURNING id`;
        const [office] = await tx<{ id: number }[]>`
          INSERT INTO offices (organization_id, name, is_default) VALUES (${org!.id}, ${`${name} main office`}, true) RETURNING id`;
        const { apiKey, keyId } = await insertKey(tx, partnerId, input.leadTracking ?? false);
        const created: CreatedPartner = { partnerId, apiKey, keyId, organizationId: org!.id, officeId: office!.id };
        if (input.test) {
          const test = await insertKey(tx, partnerId, input.leadTracking ?? false, "test");
          created.testApiKey = test.apiKey;
          created.testKeyId = test.keyId;
        }
        return created;
      });
    },

    async listPartners(input: { limit?: number } = {}): Promise<PartnerSummary[]> {
      const rows = await sql`
        SELECT p.id::text AS id, p.name, p.created_at,
               (SELECT count(*)::int FROM api_keys k WHERE k.partner_id = p.id AND k.revoked_at IS NULL) AS active_keys
        FROM partners p ORDER BY p.created_at, p.id LIMIT ${requireLimit(input.limit)}`;
      return rows.map((r) => ({ partnerId: r.id, name: r.name, createdAt: r.created_at, activeKeys: r.active_keys }));
    },

    /** A live key, or with `test` a test key (pss_test_…) whose records never reach buyers (docs/sandbox.md). */
    async createKey(input: {
      partnerId: string;
      leadTracking?: boolean;
      test?: boolean;
    }): Promise<{ apiKey: string; keyId: string }> {
      const partnerId = requireUuid(input.partnerId, "partner id");
      return insertKey(sql, partnerId, input.leadTracking ?? false, input.test ? "test" : "live");
    },

    /** Every key (of one partner, or all), oldest first; never the key itself, only its prefix. */
    async listKeys(input: { partnerId?: string; limit?: number } = {}): Promise<KeySummary[]> {
      const partnerId = input.partnerId === undefined ? undefined : requireUuid(input.partnerId, "partner id");
      if (partnerId) {
        const [partner] = await sql`SELECT 1 FROM partners WHERE id = ${partnerId}`;
        if (!partner) throw new AdminError("not_found", `partner ${partnerId} not found`);
      }
      const rows = await sql`
        SELECT id::text AS id, partner_id::text AS partner_id, key_prefix, created_at, last_used_at, lead_tracking, revoked_at
        FROM api_keys ${partnerId ? sql`WHERE partner_id = ${partnerId}` : sql``}
        ORDER BY api_keys.id LIMIT ${requireLimit(input.limit)}`;
      return rows.map((r) => ({
        keyId: r.id,
        partnerId: r.partner_id,
        prefix: r.key_prefix,
        mode: keyMode(r.key_prefix),
        createdAt: r.created_at,
        lastUsedAt: r.last_used_at,
        leadTracking: r.lead_tracking,
        revoked: r.revoked_at !== null,
        revokedAt: r.revoked_at,
      }));
    },

    /**
     * Revokes a key named by its id (`keys list`), or by the key itself when that is all an operator has (a
     * leaked key, read from stdin so it never lands in shell history). With `partnerId`, a key of another
     * partner is "not found". Idempotent: revoking again keeps the first revoked_at and still clears the cache.
     */
    async revokeKey(input: { keyId?: string; apiKey?: string; partnerId?: string }): Promise<RevokeResult> {
      const { keyId: _keyId, ...result } = await revoke(input);
      return result;
    },

    /** revokeKey, also telling which key it was (when it was named by the key itself). */
    revokeKeyNamingIt: revoke,

    /** Offices of one partner or organization (or all), with how many brokers each holds. */
    async listOffices(
      input: { partnerId?: string; organizationId?: number; limit?: number } = {},
    ): Promise<OfficeSummary[]> {
      const partnerId = input.partnerId === undefined ? undefined : requireUuid(input.partnerId, "partner id");
      const organizationId =
        input.organizationId === undefined ? undefined : requireId(input.organizationId, "organization id");
      const rows = await sql`
        SELECT o.id, o.organization_id, g.partner_id::text AS partner_id, o.name, o.is_default, o.created_at,
               (SELECT count(*)::int FROM brokers b WHERE b.office_id = o.id) AS brokers
        FROM offices o JOIN organizations g ON g.id = o.organization_id
        WHERE true ${partnerId ? sql`AND g.partner_id = ${partnerId}` : sql``} ${organizationId ? sql`AND o.organization_id = ${organizationId}` : sql``}
        ORDER BY o.id LIMIT ${requireLimit(input.limit)}`;
      return rows.map((r) => ({
        officeId: r.id,
        organizationId: r.organization_id,
        partnerId: r.partner_id,
        name: r.name,
        isDefault: r.is_default,
        brokers: r.brokers,
        createdAt: r.created_at,
      }));
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

    /**
     * Moves a broker to another office of the same partner; leads read office_id when they are created. The live
     * broker with that external ID, or with `test` the test-mode one.
     */
    async assignBrokerOffice(input: {
      partnerId: string;
      externalBrokerId: string;
      officeId: number;
      test?: boolean;
    }): Promise<{ ok: true }> {
      const partnerId = requireUuid(input.partnerId, "partner id");
      const officeId = requireId(input.officeId, "office id");
      const externalId = input.externalBrokerId;
      if (externalId.trim() === "") throw new AdminError("invalid_argument", "external broker id must not be empty");
      return retryTransaction(() =>
        sql.begin(async (tx) => {
          const [partner] = await tx`SELECT 1 FROM partners WHERE id = ${partnerId}`;
          if (!partner) throw new AdminError("not_found", `partner ${partnerId} not found`);
          // A broker must never point at another partner's office: that would leak its leads across partners.
          const [office] = await tx`
          SELECT 1 FROM offices o JOIN organizations g ON g.id = o.organization_id
          WHERE o.id = ${officeId} AND g.partner_id = ${partnerId}`;
          if (!office) throw new AdminError("not_found", `office ${officeId} not found for this partner`);
          const updated = await tx`
          UPDATE brokers SET office_id = ${officeId}, updated_at = now()
          WHERE partner_id = ${partnerId} AND mode = ${input.test ? "test" : "live"} AND external_id = ${externalId}
          RETURNING id`;
          if (updated.length === 0) throw new AdminError("not_found", "broker not found");
          return { ok: true as const };
        }),
      );
    },
  };
}

export type PartnerAdmin = ReturnType<typeof createPartnerAdmin>;
