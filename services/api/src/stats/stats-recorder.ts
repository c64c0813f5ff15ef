// Counting buyers' page views and search impressions (issue 24, part 3) without slowing a page: a page only
// appends to memory (no I/O, never throws); a flusher, every `flushIntervalMs`, deduplicates views in Redis (one
// per visitor per listing per UTC day, by a keyed hash whose key rotates daily: visitors.ts) and adds the counts
// to PostgreSQL in one idempotent statement per batch (stats-repository.ts).
//
// Faults: Redis unreachable, the views wait in memory and are tried again (up to `maxBuffered`, then the oldest
// are dropped and logged); PostgreSQL unreachable, the batch is kept and written again with the same ID, which
// the database refuses a second time: counts lag, never double. Nothing here can fail a buyer's page.
import { randomBytes, randomUUID } from "node:crypto";
import type { Server } from "bun";
import type Redis from "ioredis";
import type postgres from "postgres";
import type { Logger } from "@pss/service-kit";
import { clientAddress } from "../leads/client-address.ts";
import { deleteOldFlushIds, writeStatsBatch, type StatsRow } from "./stats-repository.ts";
import { isKnownBot, utcDay, visitorHash } from "./visitors.ts";

const TWO_DAYS_SECONDS = 2 * 24 * 3600;
const KEY_PREFIX = "pss:stats:";
/** Visitors asked about in one Redis round trip. */
const REDIS_CHUNK = 100;

export interface StatsRecorderDeps {
  sql: postgres.Sql;
  redis: Redis;
  logger: Logger;
  /** X-Forwarded-For's last hop is the client (behind our own proxy), as for lead intake. */
  trustProxy?: boolean;
  flushIntervalMs?: number;
  /** Views waiting for Redis, at most. */
  maxBuffered?: number;
  /** Visitors remembered in memory as counted today, at most. */
  maxSeen?: number;
  now?: () => Date;
}

export interface StatsRecorder {
  /** A buyer opened a listing (its page or its JSON view). Synchronous, no I/O, never throws. */
  viewed(listingId: number, request: Request, server: Pick<Server<unknown>, "requestIP"> | null): void;
  /** These listings were shown in a buyer's search results. Synchronous, no I/O, never throws. */
  shown(listingIds: readonly number[], request: Request): void;
  start(): void;
  /** Stops the timer and makes a last attempt to write what is buffered. */
  stop(): Promise<void>;
  /** One flush now (tests, shutdown). */
  flush(): Promise<void>;
  /** What waits: views not yet deduplicated, impressions not yet batched, batches not yet written. */
  backlog(): { views: number; impressions: number; batches: number };
}

interface RawView {
  listingId: number;
  day: string;
  address: string;
  userAgent: string;
}

export function createStatsRecorder(deps: StatsRecorderDeps): StatsRecorder {
  const log = deps.logger.child({ component: "buyer-stats" });
  const now = deps.now ?? (() => new Date());
  const maxBuffered = deps.maxBuffered ?? 100_000;
  let views: RawView[] = [];
  let impressions = new Map<string, number>();
  const batches: { id: string; rows: StatsRow[] }[] = [];
  let timer: ReturnType<typeof setInterval> | null = null;
  let flushing: Promise<void> | null = null;
  let dropped = 0;
  let lastCleanup = 0;
  const dayKeys = new Map<string, string>();
  // Visitors this instance already counted today (day|listing|hash): a returning visitor costs no Redis call.
  // Bounded; cleared when full or when the day changes (Redis still answers for them then).
  let seen = new Set<string>();
  let seenDay = "";
  const maxSeen = deps.maxSeen ?? 200_000;

  function keep(list: RawView[]) {
    if (list.length > maxBuffered) {
      dropped += list.length - maxBuffered;
      list.splice(0, list.length - maxBuffered);
    }
    return list;
  }

  /** The day's shared key: the first instance to need it sets it; it expires after two days. */
  async function dayKey(day: string): Promise<string> {
    const cached = dayKeys.get(day);
    if (cached) return cached;
    const key = `${KEY_PREFIX}daykey:${day}`;
    await deps.redis.set(key, randomBytes(32).toString("base64url"), "EX", TWO_DAYS_SECONDS, "NX");
    const value = await deps.redis.get(key);
    if (!value) throw new Error("day key vanished");
    for (const d of dayKeys.keys()) if (d < day) dayKeys.delete(d);
    dayKeys.set(day, value);
    return value;
  }

  /**
   * Views of new visitors, by listing and day; throws if Redis cannot answer (the caller keeps the views). Repeats
   * within the batch and visitors this instance counted today are settled in memory; the rest ask Redis in
   * chunks, yielding between them, so a large batch never holds the event loop (and the pages) for long.
   */
  async function firstVisits(list: RawView[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (list.length === 0) return out;
    const keys = new Map<string, string>();
    for (const day of new Set(list.map((v) => v.day))) keys.set(day, await dayKey(day));
    const today = utcDay(now());
    if (seenDay !== today || seen.size > maxSeen) {
      seen = new Set();
      seenDay = today;
    }
    const asked = new Set<string>();
    for (let start = 0; start < list.length; start += REDIS_CHUNK) {
      if (start > 0) await new Promise((resolve) => setImmediate(resolve));
      const chunk: [string, { listingId: number; day: string; hash: string }][] = [];
      for (const v of list.slice(start, start + REDIS_CHUNK)) {
        const hash = visitorHash(keys.get(v.day)!, v.address, v.userAgent);
        const id = `${v.day}|${v.listingId}|${hash}`;
        if (seen.has(id) || asked.has(id)) continue;
        asked.add(id);
        chunk.push([id, { listingId: v.listingId, day: v.day, hash }]);
      }
      if (chunk.length === 0) continue;
      const pipeline = deps.redis.pipeline();
      for (const [, v] of chunk) {
        const set = `${KEY_PREFIX}seen:${v.day}:${v.listingId}`;
        pipeline.sadd(set, v.hash);
        pipeline.expire(set, TWO_DAYS_SECONDS);
      }
      const results = (await pipeline.exec()) ?? [];
      chunk.forEach(([id, v], i) => {
        const [err, added] = results[i * 2] ?? [new Error("no answer"), 0];
        if (err) throw err;
        if (v.day === seenDay) seen.add(id);
        if (added === 1) out.set(`${v.listingId}|${v.day}`, (out.get(`${v.listingId}|${v.day}`) ?? 0) + 1);
      });
    }
    return out;
  }

  async function flushOnce(): Promise<void> {
    const taken = views;
    views = [];
    let visits = new Map<string, number>();
    try {
      visits = await firstVisits(taken);
    } catch (err) {
      // Not counted yet: back in front of whatever arrived meanwhile.
      views = keep([...taken, ...views]);
      log.warn("buyer stats: views wait for Redis", { waiting: views.length, err: (err as Error).message });
    }
    const shownNow = impressions;
    impressions = new Map();
    const rows = new Map<string, StatsRow>();
    const row = (k: string) => {
      let r = rows.get(k);
      if (!r) {
        const [id, day] = k.split("|");
        r = { listingId: Number(id), day: day!, views: 0, impressions: 0 };
        rows.set(k, r);
      }
      return r;
    };
    for (const [k, n] of visits) row(k).views += n;
    for (const [k, n] of shownNow) row(k).impressions += n;
    if (rows.size > 0) batches.push({ id: randomUUID(), rows: [...rows.values()] });

    while (batches.length > 0) {
      const batch = batches[0]!;
      try {
        await writeStatsBatch(deps.sql, batch.id, batch.rows);
        batches.shift();
      } catch (err) {
        log.warn("buyer stats: counts wait for PostgreSQL", { batches: batches.length, err: (err as Error).message });
        break;
      }
    }
    if (dropped > 0) {
      log.warn("buyer stats: views dropped while Redis was unreachable", { dropped });
      dropped = 0;
    }
    if (Date.now() - lastCleanup > 3600_000) {
      lastCleanup = Date.now();
      await deleteOldFlushIds(deps.sql, TWO_DAYS_SECONDS * 1000).catch(() => {});
    }
  }

  function flush(): Promise<void> {
    // One flush at a time; a caller during one waits for it and then runs its own.
    const run = (flushing ?? Promise.resolve())
      .then(flushOnce)
      .catch((err) => log.warn("buyer stats flush failed", { err: (err as Error).message }));
    flushing = run.finally(() => {
      if (flushing === run) flushing = null;
    });
    return run;
  }

  return {
    viewed(listingId, request, server) {
      try {
        const userAgent = request.headers.get("user-agent");
        if (isKnownBot(userAgent)) return;
        const address = clientAddress(request, server, deps.trustProxy ?? false) ?? "unknown";
        views.push({ listingId, day: utcDay(now()), address, userAgent: userAgent! });
        if (views.length > maxBuffered) keep(views);
      } catch {
        // Counting never fails a page.
      }
    },
    shown(listingIds, request) {
      try {
        if (listingIds.length === 0 || isKnownBot(request.headers.get("user-agent"))) return;
        const day = utcDay(now());
        for (const id of listingIds) impressions.set(`${id}|${day}`, (impressions.get(`${id}|${day}`) ?? 0) + 1);
      } catch {
        // Counting never fails a page.
      }
    },
    start() {
      if (timer) return;
      timer = setInterval(() => void flush(), deps.flushIntervalMs ?? 2000);
      timer.unref?.();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await flush();
    },
    flush,
    backlog: () => ({ views: views.length, impressions: impressions.size, batches: batches.length }),
  };
}
