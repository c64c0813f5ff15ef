// Resolves an API key to its partner. Three levels: a one-second in-process cache (a Redis round trip per
// request halves the API's throughput), Redis shared by all instances (revocation deletes the entry), and
// PostgreSQL, the truth, used alone when Redis is down. A revoked key therefore stops working within
// LOCAL_TTL_MS on every instance.
import type Redis from "ioredis";
import type postgres from "postgres";
import type { Logger } from "@pss/service-kit";
import { authCacheKey, hashApiKey, looksLikeApiKey } from "./api-key.ts";

export const AUTH_CACHE_TTL_SECONDS = 60;
/** Unknown keys are cached briefly too, so guessing does not reach PostgreSQL every time. */
const UNKNOWN_KEY_TTL_SECONDS = 10;
export const LOCAL_TTL_MS = 1000;
const LOCAL_MAX_ENTRIES = 10_000;

export interface Principal {
  partnerId: string;
  keyId: string;
  leadTracking: boolean;
}

export interface Authenticator {
  authenticate(key: string): Promise<Principal | null>;
}

export function createAuthenticator(deps: { sql: postgres.Sql; redis: Redis; logger: Logger; localTtlMs?: number }): Authenticator {
  const localTtl = deps.localTtlMs ?? LOCAL_TTL_MS;
  const local = new Map<string, { principal: Principal | null; expiresAt: number }>();

  const fromCache = async (cacheKey: string): Promise<Principal | null | undefined> => {
    if (deps.redis.status !== "ready") return undefined;
    try {
      const cached = await deps.redis.get(cacheKey);
      if (cached === null) return undefined;
      return cached === "unknown" ? null : (JSON.parse(cached) as Principal);
    } catch (err) {
      deps.logger.warn("auth cache read failed; using PostgreSQL", { err: (err as Error).message });
      return undefined;
    }
  };

  const toCache = (cacheKey: string, principal: Principal | null) => {
    if (deps.redis.status !== "ready") return;
    const value = principal ? JSON.stringify(principal) : "unknown";
    deps.redis.set(cacheKey, value, "EX", principal ? AUTH_CACHE_TTL_SECONDS : UNKNOWN_KEY_TTL_SECONDS).catch(() => {});
  };

  return {
    async authenticate(key) {
      if (!looksLikeApiKey(key)) return null;
      const now = Date.now();
      const hit = local.get(key);
      if (hit && hit.expiresAt > now) return hit.principal;
      const hash = hashApiKey(key);
      const cacheKey = authCacheKey(hash);
      let principal = await fromCache(cacheKey);
      if (principal === undefined) {
        const [row] = await deps.sql`SELECT id::text AS id, partner_id, lead_tracking FROM api_keys WHERE key_hash = ${hash} AND revoked_at IS NULL`;
        principal = row ? { partnerId: row.partner_id as string, keyId: row.id as string, leadTracking: row.lead_tracking as boolean } : null;
        toCache(cacheKey, principal);
      }
      if (localTtl > 0) {
        if (local.size >= LOCAL_MAX_ENTRIES) local.clear();
        local.set(key, { principal, expiresAt: now + localTtl });
      }
      return principal;
    },
  };
}
