// Resolves an API key to its partner. Three levels: a one-second in-process cache (a Redis round trip per
// request halves the API's throughput), Redis shared by all instances (revocation deletes the entry), and
// PostgreSQL, the truth, used alone when Redis is down. A revoked key therefore stops working within
// LOCAL_TTL_MS on every instance.
//
// Race: a lookup may read the key from PostgreSQL just before a revocation commits and write its cache entry
// just after the revocation deleted it. So every revocation also bumps the key's generation in Redis, the
// lookup reads that generation before reading PostgreSQL, and writes its entry only if the generation is still
// the one it read (one atomic script).
import type Redis from "ioredis";
import type postgres from "postgres";
import type { Logger } from "@pss/service-kit";
import { keyModeOf, type RecordMode } from "@pss/contracts";
import { authCacheKey, authGenerationKey, hashApiKey, looksLikeApiKey } from "./api-key.ts";

export const AUTH_CACHE_TTL_SECONDS = 60;
/** Unknown keys are cached briefly too, so guessing does not reach PostgreSQL every time. */
const UNKNOWN_KEY_TTL_SECONDS = 10;
export const LOCAL_TTL_MS = 1000;
const LOCAL_MAX_ENTRIES = 10_000;
/** api_keys.last_used_at is written at most this often per key and process (admin `keys list` shows it). */
export const LAST_USED_INTERVAL_MS = 60_000;

/** KEYS: entry, generation. ARGV: generation read before PostgreSQL ("" = none), value, TTL in seconds. */
const SET_IF_GENERATION = `
if (redis.call('GET', KEYS[2]) or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
return 1`;

export interface Principal {
  partnerId: string;
  keyId: string;
  leadTracking: boolean;
  /** Which of the partner's records the key reads and writes: live, or test (docs/sandbox.md). */
  mode: RecordMode;
}

export interface Authenticator {
  authenticate(key: string): Promise<Principal | null>;
}

export function createAuthenticator(deps: {
  sql: postgres.Sql;
  redis: Redis;
  logger: Logger;
  localTtlMs?: number;
  lastUsedIntervalMs?: number;
  recordLastUse?: boolean;
}): Authenticator {
  const localTtl = deps.localTtlMs ?? LOCAL_TTL_MS;
  const lastUsedInterval = deps.lastUsedIntervalMs ?? LAST_USED_INTERVAL_MS;
  const local = new Map<string, { principal: Principal | null; expiresAt: number }>();
  const lastTouched = new Map<string, number>();

  /**
   * Records that a key was used, off the request's path: not awaited, at most once per interval per key here,
   * and the WHERE keeps other instances from rewriting a fresh value. A failure only costs precision.
   */
  const touch = (keyId: string, now: number) => {
    if (deps.recordLastUse === false) return;
    const last = lastTouched.get(keyId);
    if (last !== undefined && now - last < lastUsedInterval) return;
    if (lastTouched.size >= LOCAL_MAX_ENTRIES) lastTouched.clear();
    lastTouched.set(keyId, now);
    const seconds = lastUsedInterval / 1000;
    deps.sql`
      UPDATE api_keys SET last_used_at = now()
      WHERE id = ${keyId}::bigint AND (last_used_at IS NULL OR last_used_at < now() - ${seconds}::float8 * interval '1 second')`.then(
      () => {},
      (err) => deps.logger.debug("recording a key's last use failed", { err: (err as Error).message }),
    );
  };

  /** The cached answer (undefined: not cached or Redis unusable) and the key's revocation generation read with it. */
  const fromCache = async (
    cacheKey: string,
    generationKey: string,
  ): Promise<{ principal: Principal | null | undefined; generation: string | undefined }> => {
    if (deps.redis.status !== "ready") return { principal: undefined, generation: undefined };
    try {
      const [cached, generation] = await deps.redis.mget(cacheKey, generationKey);
      if (cached === null || cached === undefined) return { principal: undefined, generation: generation ?? "" };
      return { principal: cached === "unknown" ? null : (JSON.parse(cached) as Principal), generation: undefined };
    } catch (err) {
      deps.logger.warn("auth cache read failed; using PostgreSQL", { err: (err as Error).message });
      return { principal: undefined, generation: undefined };
    }
  };

  /** Writes the entry only if no revocation happened since `generation` was read ("" = never revoked). */
  const toCache = (
    cacheKey: string,
    generationKey: string,
    generation: string | undefined,
    principal: Principal | null,
  ) => {
    if (generation === undefined || deps.redis.status !== "ready") return;
    const value = principal ? JSON.stringify(principal) : "unknown";
    const ttl = principal ? AUTH_CACHE_TTL_SECONDS : UNKNOWN_KEY_TTL_SECONDS;
    deps.redis.eval(SET_IF_GENERATION, 2, cacheKey, generationKey, generation, value, ttl).catch(() => {});
  };

  return {
    async authenticate(key) {
      if (!looksLikeApiKey(key)) return null;
      const now = Date.now();
      const hit = local.get(key);
      if (hit && hit.expiresAt > now) {
        if (hit.principal) touch(hit.principal.keyId, now);
        return hit.principal;
      }
      const hash = hashApiKey(key);
      const cacheKey = authCacheKey(hash);
      const generationKey = authGenerationKey(hash);
      const cached = await fromCache(cacheKey, generationKey);
      let principal = cached.principal;
      // Entries cached before test mode existed carry no mode: the key's prefix says it (they are all live).
      if (principal && principal.mode === undefined) principal = { ...principal, mode: keyModeOf(key) };
      if (principal === undefined) {
        const [row] =
          await deps.sql`SELECT id::text AS id, partner_id, lead_tracking, mode FROM api_keys WHERE key_hash = ${hash} AND revoked_at IS NULL`;
        principal = row
          ? {
              partnerId: row.partner_id as string,
              keyId: row.id as string,
              leadTracking: row.lead_tracking as boolean,
              mode: row.mode as RecordMode,
            }
          : null;
        toCache(cacheKey, generationKey, cached.generation, principal);
      }
      if (localTtl > 0) {
        if (local.size >= LOCAL_MAX_ENTRIES) local.clear();
        local.set(key, { principal, expiresAt: now + localTtl });
      }
      if (principal) touch(principal.keyId, now);
      return principal;
    },
  };
}
