// Resolves an API key to its partner. Redis caches lookups (revocation deletes the entry); when Redis is
// down, every lookup goes to PostgreSQL, so authentication keeps working.
import type Redis from "ioredis";
import type postgres from "postgres";
import type { Logger } from "@pss/service-kit";
import { authCacheKey, hashApiKey, looksLikeApiKey } from "./api-key.ts";

export const AUTH_CACHE_TTL_SECONDS = 60;
/** Unknown keys are cached briefly too, so guessing does not reach PostgreSQL every time. */
const UNKNOWN_KEY_TTL_SECONDS = 10;

export interface Principal {
  partnerId: string;
  keyId: string;
  leadTracking: boolean;
}

export interface Authenticator {
  authenticate(key: string): Promise<Principal | null>;
}

export function createAuthenticator(deps: { sql: postgres.Sql; redis: Redis; logger: Logger }): Authenticator {
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
      const hash = hashApiKey(key);
      const cacheKey = authCacheKey(hash);
      const cached = await fromCache(cacheKey);
      if (cached !== undefined) return cached;
      const [row] = await deps.sql`SELECT id::text AS id, partner_id, lead_tracking FROM api_keys WHERE key_hash = ${hash} AND revoked_at IS NULL`;
      const principal = row ? { partnerId: row.partner_id as string, keyId: row.id as string, leadTracking: row.lead_tracking as boolean } : null;
      toCache(cacheKey, principal);
      return principal;
    },
  };
}
