// Fixed-window counters in Redis, shared by every API instance. Fails open: if Redis is down, requests pass.
import type Redis from "ioredis";
import type { Logger } from "@pss/service-kit";

export interface RateLimiter {
  /** Returns null when allowed, else the seconds until the window resets. */
  check(bucket: string): Promise<number | null>;
  /**
   * Counts `count` units at once (a batch's items): how many of them fit in the window, and the seconds until
   * it resets when some did not. Optional: a limiter without it lets every unit through.
   */
  take?(bucket: string, count: number): Promise<{ granted: number; retryAfter: number | null }>;
}

export function createRateLimiter(deps: {
  redis: Redis;
  logger: Logger;
  limit: number;
  windowSeconds: number;
  name: string;
}): RateLimiter {
  async function take(bucket: string, units: number): Promise<{ granted: number; retryAfter: number | null }> {
    if (deps.limit <= 0 || deps.redis.status !== "ready" || units <= 0)
      return { granted: Math.max(0, units), retryAfter: null };
    const nowSeconds = Math.floor(Date.now() / 1000);
    const window = Math.floor(nowSeconds / deps.windowSeconds);
    const key = `pss:rl:${deps.name}:${bucket}:${window}`;
    try {
      const [[, count]] = (await deps.redis
        .multi()
        .incrby(key, units)
        .expire(key, deps.windowSeconds * 2)
        .exec()) as [[unknown, number]];
      // Units counted before ours, then as many of ours as still fit: what the same requests one by one would get.
      const granted = Math.max(0, Math.min(units, deps.limit - (count - units)));
      return { granted, retryAfter: granted === units ? null : (window + 1) * deps.windowSeconds - nowSeconds || 1 };
    } catch (err) {
      deps.logger.warn("rate limiter unavailable; allowing request", {
        limiter: deps.name,
        err: (err as Error).message,
      });
      return { granted: units, retryAfter: null };
    }
  }
  return {
    async check(bucket) {
      return (await take(bucket, 1)).retryAfter;
    },
    take,
  };
}
