// The overview's figures are aggregates over every listing of the partner (100,000 rows read per view for a big
// partner): computed at most once per `ttlMs` per partner, mode and lead access, and shared by the requests that
// ask meanwhile (one computation in flight, never several), in this process. The page says how old they are.
// ttlMs 0: every view computes its own (PORTAL_OVERVIEW_CACHE_SECONDS=0).
import type { Overview } from "./overview-reads.ts";
import type { PortalScope } from "./scope.ts";

const MAX_ENTRIES = 1000;

export interface OverviewCache {
  get(scope: PortalScope): Promise<{ overview: Overview; computedAt: number }>;
}

export function createOverviewCache(deps: {
  ttlMs: number;
  compute: (scope: PortalScope) => Promise<Overview>;
  now?: () => number;
}): OverviewCache {
  const now = deps.now ?? Date.now;
  const entries = new Map<string, { computedAt: number; result: Promise<Overview> }>();
  return {
    async get(scope) {
      const key = `${scope.partnerId}:${scope.mode}:${scope.leadAccess}`;
      const hit = entries.get(key);
      if (hit && now() - hit.computedAt < deps.ttlMs) return { overview: await hit.result, computedAt: hit.computedAt };
      const computedAt = now();
      const result = deps.compute(scope);
      if (deps.ttlMs > 0) {
        if (entries.size >= MAX_ENTRIES) entries.clear();
        entries.set(key, { computedAt, result });
        // A failed computation is not kept: the next view tries again.
        result.catch(() => {
          if (entries.get(key)?.result === result) entries.delete(key);
        });
      }
      return { overview: await result, computedAt };
    },
  };
}
