// Behind PgBouncer in transaction pooling (a private pgbouncer process in front of the test database): the
// "one at a time" leases (leader-lease.ts: the outbox relay, media GC, reconciler, reindex) hold across pooled
// server connections, migrations serialise, and two API processes with relays, connected through the pooler with
// DATABASE_PREPARED_STATEMENTS=false, keep exactly one relay active: every event published once and in order, and
// when the active one is SIGKILLed the other takes over within the lease (OUTBOX_RELAY_LEASE_SECONDS).
// The lease semantics are checked on a direct connection too, so they are tested where PgBouncer is missing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Redis from "ioredis";
import { Kafka, logLevel } from "kafkajs";
import postgres from "postgres";
import { Topics } from "@pss/contracts";
import { migrate, migrateDatabase } from "@pss/database";
import { createLeaderLease } from "@pss/service-kit";
import { createPartnerAdmin } from "../../services/api/src/admin/partner-admin.ts";
import {
  freePort,
  moveGroupToEnd,
  spawnService,
  waitUntil,
  type ServiceProcess,
} from "../../services/api/test/faults/support/fault-harness.ts";
import { sample } from "../../services/api/test/support/harness.ts";
import { testUrls, uniqueName } from "../support/env.ts";
import { pgbouncerMissing, startPgBouncer, type PgBouncer } from "../support/pgbouncer.ts";
import { parsePrometheusText, valueOf } from "../support/prometheus-text.ts";

const urls = testUrls();
const missing = pgbouncerMissing();
if (missing) console.error(`skipping the PgBouncer tests: ${missing}`);

let pgbouncer: PgBouncer | null = null;
const direct = postgres(urls.DATABASE_URL, { max: 4, onnotice: () => {} });
let pooled: postgres.Sql | null = null;

beforeAll(async () => {
  if (missing) return;
  pgbouncer = await startPgBouncer(urls.DATABASE_URL, { poolSize: 4 });
  pooled = postgres(pgbouncer.url, { max: 6, prepare: false, onnotice: () => {} });
}, 30_000);

afterAll(async () => {
  await pooled?.end({ timeout: 5 });
  await direct.end({ timeout: 5 });
  await pgbouncer?.stop();
}, 30_000);

for (const via of ["a direct connection", "PgBouncer in transaction pooling"] as const) {
  const skip = via !== "a direct connection" && missing !== null;
  const db = () => (via === "a direct connection" ? direct : pooled!);
  describe.skipIf(skip)(`leases through ${via}`, () => {
    test("of two contenders exactly one holds a lease; it renews it, and the other takes it once released", async () => {
      const name = uniqueName("lease");
      const a = createLeaderLease({ sql: db(), name, ttlMs: 5_000 });
      const b = createLeaderLease({ sql: db(), name, ttlMs: 5_000 });
      expect(await Promise.all([a.acquire(), b.acquire()]).then((r) => r.filter(Boolean).length)).toBe(1);
      const [holder, other] = a.isHeld() ? [a, b] : [b, a];
      expect(await holder.acquire()).toBe(true);
      expect(await other.acquire()).toBe(false);
      expect(other.isHeld()).toBe(false);
      const [row] = await db()`SELECT holder FROM leader_leases WHERE name = ${name}`;
      expect(row!.holder).toBe(holder.holder);
      await holder.release();
      expect(holder.isHeld()).toBe(false);
      expect(await other.acquire()).toBe(true);
      await other.release();
    });

    test("a holder that stops renewing (it died) loses the lease when it runs out; one that keeps renewing keeps it", async () => {
      const name = uniqueName("lease");
      const dead = createLeaderLease({ sql: db(), name, ttlMs: 1_500 });
      const next = createLeaderLease({ sql: db(), name, ttlMs: 1_500 });
      expect(await dead.acquire()).toBe(true);
      expect(await next.acquire()).toBe(false);
      await waitUntil("the lease to run out", async () => next.acquire(), 10_000);
      // The one that stopped renewing knows by its own clock, and cannot take it back.
      expect(dead.isHeld()).toBe(false);
      expect(await dead.acquire()).toBe(false);
      // The new holder renews in the background: it keeps the lease well past its length.
      const stopRenewing = next.keepRenewed();
      await Bun.sleep(3_500);
      expect(await dead.acquire()).toBe(false);
      expect(next.isHeld()).toBe(true);
      stopRenewing();
      await next.release();
      expect(await dead.acquire()).toBe(true);
      await dead.release();
    });
  });
}

describe.skipIf(missing !== null)("PgBouncer in transaction pooling", () => {
  test("why leases: a session advisory lock taken through it is neither exclusive nor released", async () => {
    // A pooler of its own: the lock this test leaks stays on one of its server connections until it stops.
    const own = await startPgBouncer(urls.DATABASE_URL, { poolSize: 2 });
    const [a, b] = [0, 1].map(() => postgres(own.url, { max: 1, prepare: false, onnotice: () => {} })) as [
      postgres.Sql,
      postgres.Sql,
    ];
    const key = Math.floor(Math.random() * 1e9);
    try {
      const take = async (c: postgres.Sql) => (await c`SELECT pg_try_advisory_lock(${key}) AS ok`)[0]!.ok as boolean;
      // Two clients "both hold" it: each statement ran on whichever server connection was free (the same one).
      expect([await take(a), await take(b)]).toEqual([true, true]);
      await a`SELECT pg_advisory_unlock(${key})`;
      const held = async () =>
        (await direct`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = ${key}`)[0]!
          .n as number;
      // And after its "holder" unlocked and went away, the server connection still holds it.
      await a.end();
      await b.end();
      expect(await held()).toBe(1);
    } finally {
      await own.stop();
    }
  });

  test("migrations run through it, concurrent runs serialised (transaction-scoped locks only)", async () => {
    expect(await migrateDatabase(pgbouncer!.url)).toBe(true);
    const clients = [0, 1].map(() => postgres(pgbouncer!.url, { max: 1, prepare: false, onnotice: () => {} }));
    try {
      expect(await Promise.all(clients.map((c) => migrate(c)))).toEqual([[], []]);
    } finally {
      await Promise.all(clients.map((c) => c.end({ timeout: 5 })));
    }
    // Nothing was left behind on the pooled server connections: no advisory lock is held in this database.
    // (Polled: the server connections of the previous test's pooler may still be closing.)
    const advisoryLocks = async () =>
      (
        await direct`SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE l.locktype = 'advisory' AND d.datname = current_database()`
      )[0]!.n as number;
    await waitUntil("no advisory lock in this database", async () => (await advisoryLocks()) === 0, 10_000);
  });

  test("two API processes through it: one relay active, events once and in order; SIGKILL the active one and the other takes over", async () => {
    const redis = new Redis(urls.REDIS_URL, { lazyConnect: true });
    const partner = await createPartnerAdmin({ sql: direct, redis }).createPartner({
      name: uniqueName("pgbouncer-partner"),
      leadTracking: false,
    });
    redis.disconnect();
    // The partner's listing events, as a consumer group started at the topic's end sees them.
    const kafka = new Kafka({
      clientId: uniqueName("pgbouncer-test"),
      brokers: urls.KAFKA_BROKERS.split(","),
      logLevel: logLevel.NOTHING,
    });
    const group = uniqueName("pgbouncer-events");
    await moveGroupToEnd(kafka, group, [Topics.listingEvents.name]);
    const versions = new Map<string, number[]>();
    const consumer = kafka.consumer({ groupId: group });
    await consumer.connect();
    await consumer.subscribe({ topic: Topics.listingEvents.name });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const event = JSON.parse(message.value!.toString()) as {
          partnerId: string;
          aggregateId: string;
          version: number;
        };
        if (event.partnerId === partner.partnerId)
          versions.set(event.aggregateId, [...(versions.get(event.aggregateId) ?? []), event.version]);
      },
    });

    const apis: { proc: ServiceProcess; base: string; health: string }[] = [];
    try {
      // Four distinct ports first: freePort gives each back at once, so two starts picking theirs side by side
      // could get one the other took (an API then answers the other's /healthz with 404).
      const ports = new Set<number>();
      while (ports.size < 4) ports.add(await freePort());
      const [a = 0, b = 0, c = 0, d = 0] = [...ports];
      const pairs: [number, number][] = [
        [a, b],
        [c, d],
      ];
      await Promise.all(
        pairs.map(async ([port, healthPort]) => {
          const proc = await spawnService(
            "api",
            {
              API_PORT: String(port),
              API_HEALTH_PORT: String(healthPort),
              DATABASE_URL: pgbouncer!.url,
              DATABASE_PREPARED_STATEMENTS: "false",
              OUTBOX_RELAY_ENABLED: "true",
              OUTBOX_RELAY_LEASE_SECONDS: "4",
              OPENSEARCH_INDEX_ALIAS: uniqueName("unused-listings"),
              MEDIA_DIR: ".data/media-test",
              LOG_LEVEL: "info",
            },
            healthPort,
          );
          apis.push({ proc, base: `http://127.0.0.1:${port}`, health: `http://127.0.0.1:${healthPort}` });
        }),
      );
      const active = async (api: (typeof apis)[number]) =>
        valueOf(parsePrometheusText(await (await fetch(`${api.health}/metrics`)).text()), "outbox_relay_active") === 1;
      const activeOnes = async () =>
        (
          await Promise.all(
            apis.filter((a) => a.proc.exitCode() === null).map(async (a) => ((await active(a)) ? a : null)),
          )
        ).filter((a) => a !== null);
      await waitUntil("a relay to be active", async () => (await activeOnes()).length > 0, 30_000);

      const headers = { authorization: `Bearer ${partner.apiKey}`, "content-type": "application/json" };
      const put = async (base: string, path: string, body: unknown) => {
        const res = await fetch(base + path, { method: "PUT", headers, body: JSON.stringify(body) });
        const text = await res.text();
        if (res.status !== 200 && res.status !== 201)
          throw new Error(`PUT ${path} through ${base} answered ${res.status}: ${text}`);
        return JSON.parse(text) as { serviceListingId?: number };
      };
      const brokerId = uniqueName("broker");
      await put(apis[0]!.base, `/partner/v1/brokers/${brokerId}`, sample.broker());
      // Six listings, three versions each, written alternately through both APIs (and both through the pooler).
      const listings = Array.from({ length: 6 }, () => uniqueName("pooled"));
      const ids = new Map<string, string>();
      for (let v = 1; v <= 3; v++) {
        for (const [n, externalId] of listings.entries()) {
          const body = await put(
            apis[(n + v) % 2]!.base,
            `/partner/v1/listings/${externalId}`,
            sample.listing(brokerId, { title: `${externalId} v${v}`, photos: [] }),
          );
          ids.set(externalId, String(body.serviceListingId));
        }
      }
      const seen = (upTo: number) => [...ids.values()].every((id) => (versions.get(id) ?? []).length >= upTo);
      await waitUntil("every version to be published", async () => seen(3), 60_000);
      // One relay is active (polled: a probe may fall between a lease running out and the other taking it), and
      // each version went out once, in order, unless a relay lost its lease mid-send (the documented exception:
      // a stalled holder may send once more). Its lifecycle lines come with any failure.
      const activeNow = await waitUntil(
        "exactly one relay to be active",
        async () => {
          const active = await activeOnes();
          return active.length === 1 ? active : null;
        },
        15_000,
      );
      expectPublishedOnceInOrder(
        ids,
        versions,
        3,
        apis.map((a) => a.proc),
      );

      // The active relay's API dies; writes go on through the other, whose relay takes over once the lease ran out.
      const [victim] = activeNow as [(typeof apis)[number]];
      const survivor = apis.find((a) => a !== victim)!;
      expect(await victim.proc.kill()).not.toBe(0);
      for (let v = 4; v <= 6; v++) {
        for (const externalId of listings)
          await put(
            survivor.base,
            `/partner/v1/listings/${externalId}`,
            sample.listing(brokerId, { title: `${externalId} v${v}`, photos: [] }),
          );
      }
      await waitUntil("the survivor's relay to take over", async () => active(survivor), 30_000);
      await waitUntil("every later version to be published", async () => seen(6), 60_000);
      // The victim was idle when it died: nothing was in flight, so nothing is repeated.
      expectPublishedOnceInOrder(
        ids,
        versions,
        6,
        apis.map((a) => a.proc),
      );
      const [lease] = await direct`SELECT holder FROM leader_leases WHERE name = 'outbox-relay'`;
      expect(lease!.holder).toContain(":");
      expect(survivor.proc.exitCode()).toBeNull();
    } finally {
      await consumer.disconnect();
      await Promise.all(apis.map((a) => a.proc.stop()));
    }
  }, 180_000);
});

/** The relays' lease lifecycle as their logs tell it: taken, lost, failed rounds. */
function relayLifecycle(procs: ServiceProcess[]): string[] {
  return procs.flatMap((p, n) =>
    p.lines.filter((l) => /outbox relay (active|lost|failed)/.test(l)).map((l) => `api ${n}: ${l}`),
  );
}

/**
 * Every listing's versions 1..upTo were published once and in order. A relay that lost its lease mid-send may
 * have sent a batch again (at least once, absorbed by consumers' version checks): only then are repeats allowed,
 * and the first sightings must still be in order.
 */
function expectPublishedOnceInOrder(
  ids: Map<string, string>,
  versions: Map<string, number[]>,
  upTo: number,
  procs: ServiceProcess[],
): void {
  const expected = Array.from({ length: upTo }, (_, i) => i + 1);
  const lifecycle = relayLifecycle(procs);
  const leaseLost = lifecycle.some((l) => l.includes("lost its lease") || l.includes("relay failed"));
  const published = [...ids.values()].map((id) => versions.get(id) ?? []);
  const firstSightings = published.map((v) => v.filter((x, i) => v.indexOf(x) === i));
  const context = `published versions per listing: ${JSON.stringify(published)}\nrelay lifecycle:\n${lifecycle.join("\n")}`;
  const matches = (leaseLost ? firstSightings : published).every(
    (v) => v.length === upTo && v.every((x, i) => x === expected[i]),
  );
  if (!matches)
    throw new Error(
      `expected every listing's versions ${JSON.stringify(expected)} ${leaseLost ? "in order" : "once each, in order"}\n${context}`,
    );
}
