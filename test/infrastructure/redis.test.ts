import { afterAll, expect, test } from "bun:test";
import Redis from "ioredis";
import { testUrls, uniqueName } from "../support/env.ts";

const redis = new Redis(testUrls().REDIS_URL);
afterAll(() => redis.quit());

test("Redis stores a value with a TTL and returns it", async () => {
  const key = uniqueName("plumbing");
  await redis.set(key, "hello", "EX", 30);
  expect(await redis.get(key)).toBe("hello");
  const ttl = await redis.ttl(key);
  expect(ttl).toBeGreaterThan(0);
  expect(ttl).toBeLessThanOrEqual(30);
});
