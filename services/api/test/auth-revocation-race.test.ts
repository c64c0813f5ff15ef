// A key revoked between an authentication's PostgreSQL read and its Redis write must not be cached as valid.
// Real PostgreSQL and Redis; the interleaving is forced by running the revocation exactly when the lookup's
// database read has returned and before the lookup writes its cache entry.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Redis from "ioredis";
import postgres from "postgres";
import { silentLogger } from "@pss/service-kit";
import { createPartnerAdmin } from "../src/admin/partner-admin.ts";
import { authCacheKey, hashApiKey, createAuthenticator } from "@pss/http-kit";
import { testUrls, uniqueName } from "../../../test/support/env.ts";

let sql: postgres.Sql;
let redis: Redis;
let admin: ReturnType<typeof createPartnerAdmin>;

beforeAll(async () => {
  const urls = testUrls();
  sql = postgres(urls.DATABASE_URL, { max: 4, onnotice: () => {} });
  redis = new Redis(urls.REDIS_URL, { maxRetriesPerRequest: 1 });
  admin = createPartnerAdmin({ sql, redis });
});

afterAll(async () => {
  await sql.end({ timeout: 5 });
  redis.disconnect();
});

/** The real client, except that after each query has returned, `between()` runs before the caller sees the rows. */
function sqlThatPausesAfterReads(between: () => Promise<void>): postgres.Sql {
  const wrapped = (strings: TemplateStringsArray, ...values: unknown[]) =>
    (sql as unknown as (s: TemplateStringsArray, ...v: unknown[]) => Promise<unknown>)(strings, ...values).then(
      async (rows) => {
        await between();
        return rows;
      },
    );
  return wrapped as unknown as postgres.Sql;
}

/** The fire-and-forget cache write has had time to land (a local Redis answers in well under a millisecond). */
const settle = () => Bun.sleep(100);

describe("auth cache and revocation", () => {
  test("a key revoked after the lookup read PostgreSQL but before it wrote Redis is not cached as valid", async () => {
    const { partnerId, apiKey } = await admin.createPartner({ name: uniqueName("race partner") });
    const cacheKey = authCacheKey(hashApiKey(apiKey));
    let revocations = 0;
    const racing = createAuthenticator({
      sql: sqlThatPausesAfterReads(async () => {
        revocations++;
        expect(await admin.revokeKey({ partnerId, apiKey })).toEqual({ revoked: true });
      }),
      redis,
      logger: silentLogger,
      localTtlMs: 0,
      // Its last-use write would run the revocation hook a second time.
      recordLastUse: false,
    });

    // The lookup read the key while it was still valid: this one request may pass (it started before the revocation).
    const during = await racing.authenticate(apiKey);
    expect(during?.partnerId).toBe(partnerId);
    expect(revocations).toBe(1);
    await settle();

    // What matters: nothing valid was left in the shared cache for the other instances.
    const cached = await redis.get(cacheKey);
    expect(cached ?? "").not.toContain(partnerId);
    const otherInstance = createAuthenticator({ sql, redis, logger: silentLogger, localTtlMs: 0 });
    expect(await otherInstance.authenticate(apiKey)).toBeNull();
    await settle();
    expect(await otherInstance.authenticate(apiKey)).toBeNull();
  });

  test("without a revocation the lookup still caches the key for the other instances", async () => {
    const { partnerId, apiKey } = await admin.createPartner({ name: uniqueName("cache partner") });
    const cacheKey = authCacheKey(hashApiKey(apiKey));
    const first = createAuthenticator({ sql, redis, logger: silentLogger, localTtlMs: 0 });
    expect((await first.authenticate(apiKey))?.partnerId).toBe(partnerId);
    await settle();
    expect(JSON.parse((await redis.get(cacheKey))!).partnerId).toBe(partnerId);
    expect(await redis.ttl(cacheKey)).toBeGreaterThan(50);
  });

  test("a key revoked earlier and looked up again is cached as unknown, never as valid", async () => {
    const { partnerId, apiKey } = await admin.createPartner({ name: uniqueName("revoked partner") });
    const cacheKey = authCacheKey(hashApiKey(apiKey));
    await admin.revokeKey({ partnerId, apiKey });
    const lookup = createAuthenticator({ sql, redis, logger: silentLogger, localTtlMs: 0 });
    expect(await lookup.authenticate(apiKey)).toBeNull();
    await settle();
    expect(await redis.get(cacheKey)).toBe("unknown");
    expect(await lookup.authenticate(apiKey)).toBeNull();
  });
});
