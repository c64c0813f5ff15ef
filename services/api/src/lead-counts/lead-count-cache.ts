// A few seconds of Redis cache in front of the counts: repeated dashboards polls cost nothing, and a new lead
// still shows within the TTL. Fails open: without Redis every request goes to PostgreSQL.
import type Redis from "ioredis";
import type { Logger } from "@pss/service-kit";

export interface LeadCountCache {
  get<T>(key: string): Promise<T | null>;
  set(key: string, value: unknown): Promise<void>;
}

export function createLeadCountCache(deps: { redis: Redis; logger: Logger; ttlSeconds: number }): LeadCountCache {
  const prefix = "pss:lead-count:v1:";
  const usable = () => deps.ttlSeconds > 0 && deps.redis.status === "ready";
  return {
    async get<T>(key: string) {
      if (!usable()) return null;
      try {
        const hit = await deps.redis.get(prefix + key);
        return hit === null ? null : (JSON.parse(hit) as T);
      } catch (err) {
        deps.logger.warn("lead count cache read failed", { err: (err as Error).message });
        return null;
      }
    },
    async set(key, value) {
      if (!usable()) return;
      await deps.redis
        .set(prefix + key, JSON.stringify(value), "EX", deps.ttlSeconds)
        .catch((err: Error) => deps.logger.warn("lead count cache write failed", { err: err.message }));
    },
  };
}
