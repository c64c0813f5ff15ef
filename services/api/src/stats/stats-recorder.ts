// Counting buyers' page views and search impressions (issue 24, part 3; issue 29) without slowing a page: a page
// only hashes the visitor and appends to memory (no I/O, never throws); a flusher, every `flushIntervalMs`,
// deduplicates in Redis and adds the counts to PostgreSQL in one idempotent statement per batch
// (stats-repository.ts).
//
// Who counts (docs/partner-api.md, "Buyer statistics per listing"; how: docs/api-internals.md): a visitor is its address (IPv6: its /64) and its
// User-Agent, hashed under the day's key with the listing (visitors.ts); one view and one impression per visitor per
// listing per UTC day, and at most `visitorsPerAddress` visitors per address per listing per day, so a script
// rotating User-Agents adds no more than a few buyers sharing one address do; an IPv6 address's /48 (65,536 /64s)
// adds at most `visitorsPerSite` per listing per day, so rotating /64s does not multiply the cap either. Redis holds, per listing and day, each
// address's hash with the hashes of the visitors counted for it: bounded by the cap, expiring after two days. The
// day's key is random, kept in PostgreSQL (not beside the hashes) and deleted once the day is over.
//
// Faults: Redis unreachable, the hashes wait in memory (sighting-queue.ts: at most `maxBuffered`, then the oldest are
// dropped and logged) and are tried again; PostgreSQL unreachable, the batch is kept and written again with the same
// ID, which the database refuses a second time: counts lag, never double. No day key yet (PostgreSQL unreachable
// since before the day began; tomorrow's is fetched a day ahead), a page is not counted. Nothing fails a page.
import { randomUUID } from "node:crypto";
import type { Server } from "bun";
import type Redis from "ioredis";
import type postgres from "postgres";
import type { Logger } from "@pss/service-kit";
import { addressBucket, clientAddress, sitePrefix, type TrustedProxies } from "../leads/client-address.ts";
import { createSightingQueue, groupOf, idOf, siteGroupOf, type Sighting, type SightingKind } from "./sighting-queue.ts";
import { dayKey, deleteDayKeysBefore, deleteOldFlushIds, writeStatsBatch, type StatsRow } from "./stats-repository.ts";
import { isKnownBot, utcDay, visitorHashes } from "./visitors.ts";

const TWO_DAYS_SECONDS = 2 * 24 * 3600;
const DAY_MS = 24 * 3600 * 1000;
/** Redis keys: pss:stats:<v|i>:<day>:<listing>, a hash of address hash → the counted visitors' hashes. */
const KEY_PREFIX = "pss:stats:";
/** Sightings settled in one Redis round trip. */
const REDIS_CHUNK = 100;
/** Default of `visitorsPerAddress`: several buyers behind one address still count, a script does not inflate. */
export const VISITORS_PER_ADDRESS = 3;
/** Default of `visitorsPerSite`: an office's or a household's few /64s count, a /48 of rotating /64s does not. */
export const VISITORS_PER_SITE = 12;

/**
 * Counts a visitor once, and only while its address group holds fewer than ARGV[3] visitors and (IPv6) its site
 * group, ARGV[5] (empty for IPv4), fewer than ARGV[6]: 1 counted, 0 already counted, -1 the address group is full,
 * -2 the site group is. Visitors are stored as ".<hash>" (the dot cannot occur in a hash, so a match never straddles
 * two); a site group is a counter under "/<hash>" ("/" cannot occur in an address hash). Atomic, so instances
 * flushing at once never pass a cap together.
 */
const COUNT_ONCE = `
local held = redis.call('HGET', KEYS[1], ARGV[1]) or ''
local entry = '.' .. ARGV[2]
if string.find(held, entry, 1, true) then return 0 end
if string.len(held) >= tonumber(ARGV[3]) * string.len(entry) then return -1 end
if ARGV[5] ~= '' then
  local site = '/' .. ARGV[5]
  if tonumber(redis.call('HGET', KEYS[1], site) or '0') >= tonumber(ARGV[6]) then return -2 end
  redis.call('HINCRBY', KEYS[1], site, 1)
end
redis.call('HSET', KEYS[1], ARGV[1], held .. entry)
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1`;

export interface StatsRecorderDeps {
  sql: postgres.Sql;
  redis: Redis;
  logger: Logger;
  /** Whose X-Forwarded-For tells the client's address (TRUST_PROXY_CIDRS), as for lead intake; absent: nobody's. */
  trustedProxies?: TrustedProxies;
  flushIntervalMs?: number;
  /** Views and impressions waiting for Redis, at most (hashes only: 100,000 take about 30 MB). */
  maxBuffered?: number;
  /** Visitors counted per address (IPv6: per /64) per listing per day, at most. */
  visitorsPerAddress?: number;
  /** Visitors counted per IPv6 /48 per listing per day, at most. */
  visitorsPerSite?: number;
  /** Visitors remembered in memory as settled today, at most. */
  maxSeen?: number;
  now?: () => Date;
}

/** Where the client address comes from (Elysia's `server`; null: the address is unknown). */
export type PageServer = Pick<Server<unknown>, "requestIP"> | null;

export interface StatsRecorder {
  /** A buyer opened a listing (its page or its JSON view). Synchronous, no I/O, never throws. */
  viewed(listingId: number, request: Request, server: PageServer): void;
  /** These listings were shown in a buyer's search results. Synchronous, no I/O, never throws. */
  shown(listingIds: readonly number[], request: Request, server: PageServer): void;
  start(): void;
  /** Stops the timer and makes a last attempt to write what is buffered. */
  stop(): Promise<void>;
  /** One flush now (tests, shutdown); also fetches the day keys. */
  flush(): Promise<void>;
  /** What waits: views and impressions not yet deduplicated, batches not yet written. */
  backlog(): { views: number; impressions: number; batches: number };
  /** What waits for Redis, exactly as held in memory (tests: hashes only). */
  waiting(): readonly Sighting[];
}

export function createStatsRecorder(deps: StatsRecorderDeps): StatsRecorder {
  const log = deps.logger.child({ component: "buyer-stats" });
  const now = deps.now ?? (() => new Date());
  const perAddress = deps.visitorsPerAddress ?? VISITORS_PER_ADDRESS;
  const perSite = deps.visitorsPerSite ?? VISITORS_PER_SITE;
  const queue = createSightingQueue({ max: deps.maxBuffered ?? 100_000, perAddress, perSite });
  const batches: { id: string; rows: StatsRow[] }[] = [];
  let timer: ReturnType<typeof setInterval> | null = null;
  let flushing: Promise<void> | null = null;
  let unkeyed = 0;
  let lastCleanup = 0;
  /** Today's and tomorrow's keys, fetched by the flusher so that a page never waits for one. */
  const dayKeys = new Map<string, Buffer>();
  // Sightings settled today (counted or repeated: their id) and full address groups (their group): seen again, they
  // are not queued. Bounded; cleared when full or when the day changes (Redis still answers for them then).
  let seen = new Set<string>();
  let seenDay = "";
  const maxSeen = deps.maxSeen ?? 200_000;

  function remember(key: string, day: string) {
    if (day !== seenDay) return;
    if (seen.size >= maxSeen) seen = new Set();
    seen.add(key);
  }

  function sight(kind: SightingKind, listingIds: readonly number[], request: Request, server: PageServer) {
    const userAgent = request.headers.get("user-agent");
    if (listingIds.length === 0 || isKnownBot(userAgent)) return;
    const day = utcDay(now());
    const key = dayKeys.get(day);
    if (!key) {
      unkeyed += listingIds.length;
      return;
    }
    if (day !== seenDay) {
      seen = new Set();
      seenDay = day;
    }
    const address = clientAddress(request, server, deps.trustedProxies);
    const bucket = addressBucket(address);
    const site = sitePrefix(address);
    for (const listingId of listingIds) {
      const s: Sighting = { kind, listingId, day, ...visitorHashes(key, listingId, bucket, userAgent!, site) };
      const siteGroup = siteGroupOf(s);
      if (!seen.has(idOf(s)) && !seen.has(groupOf(s)) && !(siteGroup && seen.has(siteGroup))) queue.add(s);
    }
  }

  /** Fetches the keys of today and tomorrow that are not in memory yet; drops older ones (here and, hourly, in PostgreSQL). */
  async function fetchDayKeys(): Promise<void> {
    const today = utcDay(now());
    for (const day of [today, utcDay(new Date(now().getTime() + DAY_MS))]) {
      if (!dayKeys.has(day)) dayKeys.set(day, await dayKey(deps.sql, day));
    }
    for (const day of dayKeys.keys()) if (day < today) dayKeys.delete(day);
  }

  /**
   * Settles sightings in Redis: the counted ones as rows by listing and day, and those Redis did not answer for (kept
   * by the caller). Asks in chunks, yielding between them, so a large batch never holds the event loop for long.
   */
  async function settle(list: Sighting[]): Promise<{ rows: StatsRow[]; unsettled: Sighting[]; err?: Error }> {
    const rows = new Map<string, StatsRow>();
    const unsettled: Sighting[] = [];
    let err: Error | undefined;
    for (let start = 0; start < list.length; start += REDIS_CHUNK) {
      if (start > 0) await new Promise((resolve) => setImmediate(resolve));
      const chunk = list.slice(start, start + REDIS_CHUNK);
      const pipeline = deps.redis.pipeline();
      for (const s of chunk) {
        const key = `${KEY_PREFIX}${s.kind === "view" ? "v" : "i"}:${s.day}:${s.listingId}`;
        pipeline.eval(COUNT_ONCE, 1, key, s.address, s.visitor, perAddress, TWO_DAYS_SECONDS, s.site ?? "", perSite);
      }
      const results = await pipeline.exec().catch((e: Error) => {
        err = e;
        return null;
      });
      if (!results) {
        unsettled.push(...list.slice(start));
        break;
      }
      chunk.forEach((s, i) => {
        const [failed, outcome] = results[i] ?? [new Error("no answer"), 0];
        if (failed) {
          err = failed;
          unsettled.push(s);
        } else if (outcome === -1) remember(groupOf(s), s.day);
        else if (outcome === -2) remember(siteGroupOf(s)!, s.day);
        else {
          remember(idOf(s), s.day);
          if (outcome !== 1) return;
          const k = `${s.listingId}|${s.day}`;
          let row = rows.get(k);
          if (!row) rows.set(k, (row = { listingId: s.listingId, day: s.day, views: 0, impressions: 0 }));
          if (s.kind === "view") row.views++;
          else row.impressions++;
        }
      });
      if (err) {
        // Redis is failing: the rest waits for the next flush rather than failing chunk by chunk.
        unsettled.push(...list.slice(start + REDIS_CHUNK));
        break;
      }
    }
    return { rows: [...rows.values()], unsettled, err };
  }

  async function flushOnce(): Promise<void> {
    await fetchDayKeys().catch((err) => log.warn("buyer stats: day key unavailable", { err: (err as Error).message }));
    const { rows, unsettled, err } = await settle(queue.take());
    if (unsettled.length > 0) {
      // Not counted yet: back in front of whatever arrived meanwhile.
      queue.putBack(unsettled);
      log.warn("buyer stats: views wait for Redis", { waiting: queue.size(), err: err?.message });
    }
    if (rows.length > 0) batches.push({ id: randomUUID(), rows });

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
    const dropped = queue.takeDropped();
    if (dropped > 0) log.warn("buyer stats: views dropped while Redis was unreachable", { dropped });
    if (unkeyed > 0) {
      log.warn("buyer stats: views not counted, no day key yet", { uncounted: unkeyed });
      unkeyed = 0;
    }
    if (Date.now() - lastCleanup > 3600_000) {
      lastCleanup = Date.now();
      await deleteOldFlushIds(deps.sql, TWO_DAYS_SECONDS * 1000).catch(() => {});
      await deleteDayKeysBefore(deps.sql, utcDay(now())).catch(() => {});
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
        sight("view", [listingId], request, server);
      } catch {
        // Counting never fails a page.
      }
    },
    shown(listingIds, request, server) {
      try {
        sight("impression", listingIds, request, server);
      } catch {
        // Counting never fails a page.
      }
    },
    start() {
      if (timer) return;
      timer = setInterval(() => void flush(), deps.flushIntervalMs ?? 2000);
      timer.unref?.();
      void flush(); // the day keys, before the first page
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await flush();
    },
    flush,
    backlog() {
      let views = 0;
      const list = queue.waiting();
      for (const s of list) if (s.kind === "view") views++;
      return { views, impressions: list.length - views, batches: batches.length };
    },
    waiting: () => queue.waiting(),
  };
}
