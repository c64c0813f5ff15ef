// Publishes outbox rows to Kafka in id order, then marks them sent. One relay is active at a time (a session
// advisory lock; other API instances stand by), which keeps every aggregate's events in order. If Kafka is
// down, rows wait and the API keeps accepting writes; they flow once Kafka answers again.
import type { Producer } from "kafkajs";
import type postgres from "postgres";
import { createInterruptibleSleep, type Logger } from "@pss/service-kit";

const RELAY_LOCK_ID = 727_002;

export interface OutboxRelayOptions {
  batchSize?: number;
  idlePollMs?: number;
  maxBackoffMs?: number;
  /** Sent rows are kept this long for inspection, then deleted. */
  retentionMs?: number;
}

export interface OutboxRelay {
  start(): void;
  stop(): Promise<void>;
  /** Rows not yet published: a measure of backlog. */
  backlog(): Promise<number>;
}

export function createOutboxRelay(deps: { sql: postgres.Sql; producer: Producer; logger: Logger }, opts: OutboxRelayOptions = {}): OutboxRelay {
  const batchSize = opts.batchSize ?? 500;
  const idlePollMs = opts.idlePollMs ?? 25;
  const maxBackoffMs = opts.maxBackoffMs ?? 5_000;
  const retentionMs = opts.retentionMs ?? 24 * 3600 * 1000;
  const log = deps.logger.child({ component: "outbox-relay" });
  let running = false;
  let loop: Promise<void> | null = null;
  let producerConnected = false;
  const { sleep, wake } = createInterruptibleSleep();

  async function publishBatch(conn: postgres.ReservedSql): Promise<number> {
    // payload::text goes to Kafka as it is: parsing and re-serialising it cost a third of the API's throughput.
    const rows = await conn<{ id: string; topic: string; message_key: string; payload: string }[]>`
      SELECT id::text AS id, topic, message_key, payload::text AS payload FROM outbox WHERE published_at IS NULL ORDER BY id LIMIT ${batchSize}`;
    if (rows.length === 0) return 0;
    if (!producerConnected) {
      await deps.producer.connect();
      producerConnected = true;
    }
    const byTopic = new Map<string, { key: string; value: string }[]>();
    for (const row of rows) {
      const list = byTopic.get(row.topic) ?? [];
      list.push({ key: row.message_key, value: row.payload });
      byTopic.set(row.topic, list);
    }
    await deps.producer.sendBatch({ acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
    await conn`UPDATE outbox SET published_at = now() WHERE id = ANY(${rows.map((r) => r.id)}::bigint[])`;
    return rows.length;
  }

  async function run(): Promise<void> {
    let backoff = 200;
    let lastCleanup = 0;
    while (running) {
      let conn: postgres.ReservedSql | null = null;
      try {
        conn = await deps.sql.reserve();
        const [{ locked }] = (await conn`SELECT pg_try_advisory_lock(${RELAY_LOCK_ID}) AS locked`) as unknown as [{ locked: boolean }];
        if (!locked) {
          // Another instance relays; check again later in case it goes away.
          conn.release();
          conn = null;
          await sleep(2_000);
          continue;
        }
        log.info("outbox relay active");
        while (running) {
          const sent = await publishBatch(conn);
          backoff = 200;
          if (Date.now() - lastCleanup > 60_000) {
            lastCleanup = Date.now();
            await conn`DELETE FROM outbox WHERE published_at < ${new Date(Date.now() - retentionMs)}`;
          }
          if (sent < batchSize) await sleep(idlePollMs);
        }
      } catch (err) {
        log.warn("outbox relay failed; retrying", { err: (err as Error).message, retryInMs: backoff });
        if (producerConnected) {
          producerConnected = false;
          await deps.producer.disconnect().catch(() => {});
        }
        await sleep(backoff + Math.random() * backoff * 0.2);
        backoff = Math.min(backoff * 2, maxBackoffMs);
      } finally {
        if (conn) {
          await conn`SELECT pg_advisory_unlock(${RELAY_LOCK_ID})`.catch(() => {});
          conn.release();
        }
      }
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    async stop() {
      running = false;
      wake();
      await loop;
      if (producerConnected) await deps.producer.disconnect().catch(() => {});
      producerConnected = false;
    },
    async backlog() {
      const [row] = await deps.sql`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`;
      return row!.n as number;
    },
  };
}
