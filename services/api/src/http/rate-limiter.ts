// Fixed-window counters in Redis, shared by every API instance. Fails open: if Redis is down, requests pass.
import type Redis from "ioredis";
import type { Logger } from "@pss/service-kit";

export interface RateLimiter {
  /** Returns null when allowed, else the seconds until the window resets. */
  check(bucket: string): Promise<number | null>;
}

export function createRateLimiter(deps: { redis: Redis; logger: Logger; limit: number; windowSeconds: number; name: string }): RateLimiter {
  return {
    async check(bucket) {
      if (deps.limit <= 0 || deps.redis.status !== "ready") return null;
      const nowSeconds = Math.floor(Date.now() / 1000);
      const window = Math.floor(nowSeconds / deps.windowSeconds);
      const key = `pss:rl:${deps.name}:${bucket}:${window}`;
      try {
        const [[, count]] = (await deps.redis.multi().incr(key).expire(key, deps.windowSeconds * 2).exec()) as [[unknown, number]];
        if (count <= deps.limit) return null;
        return (window + 1) * deps.windowSeconds - nowSeconds || 1;
      } catch (err) {
        deps.logger.warn("rate limiter unavailable; allowing request", { limiter: deps.name, err: (err as Error).message });
        return null;
      }
    },
  };
}
