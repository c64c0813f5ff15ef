// What the outbox holds, for operators (admin CLI, probes, tests): rows waiting for the relay and rows it set
// aside because Kafka can never take them. Reads only PostgreSQL, so it works without Kafka or a relay.
import type postgres from "postgres";

export interface OutboxBacklog {
  /** Rows waiting to be published. */
  pending: number;
  /** Age of the oldest waiting row in milliseconds (PostgreSQL's clock); 0 when none waits. */
  oldestPendingAgeMs: number;
  /** Rows set aside: never published until re-queued. */
  setAside: number;
}

export interface SetAsideRow {
  id: string;
  topic: string;
  messageKey: string;
  /** Envelope fields that name the event; the payload itself stays in the table. */
  eventType: string | null;
  version: number | null;
  bytes: number;
  createdAt: Date;
  setAsideAt: Date;
  reason: string;
}

export interface OutboxStatus {
  backlog(): Promise<OutboxBacklog>;
  /** Set-aside rows, oldest first. */
  listSetAside(limit?: number): Promise<SetAsideRow[]>;
  /**
   * Puts set-aside rows back in line (e.g. after raising the topic's max.message.bytes); returns how many.
   * They are published after newer events of the same aggregate: consumers skip them as stale versions.
   */
  requeue(ids: readonly string[]): Promise<number>;
}

export function createOutboxStatus(deps: { sql: postgres.Sql }): OutboxStatus {
  const { sql } = deps;
  return {
    async backlog() {
      // Each part is answered from its partial index (outbox_pending, outbox_set_aside).
      const [row] = await sql<{ pending: number; oldest_ms: number | null; set_aside: number }[]>`
        SELECT
          (SELECT count(*)::int FROM outbox WHERE published_at IS NULL AND set_aside_at IS NULL) AS pending,
          (SELECT floor(extract(epoch FROM now() - created_at) * 1000)::float8 FROM outbox
             WHERE published_at IS NULL AND set_aside_at IS NULL ORDER BY id LIMIT 1) AS oldest_ms,
          (SELECT count(*)::int FROM outbox WHERE set_aside_at IS NOT NULL) AS set_aside`;
      return { pending: row!.pending, oldestPendingAgeMs: Math.max(0, row!.oldest_ms ?? 0), setAside: row!.set_aside };
    },
    async listSetAside(limit = 100) {
      const rows = await sql<
        {
          id: string;
          topic: string;
          message_key: string;
          type: string | null;
          version: number | null;
          bytes: number;
          created_at: Date;
          set_aside_at: Date;
          set_aside_reason: string | null;
        }[]
      >`
        SELECT id::text AS id, topic, message_key, payload->>'type' AS type,
               CASE WHEN jsonb_typeof(payload->'version') = 'number' THEN (payload->>'version')::float8 END AS version,
               octet_length(payload::text) AS bytes, created_at, set_aside_at, set_aside_reason
        FROM outbox WHERE set_aside_at IS NOT NULL ORDER BY id LIMIT ${Math.max(1, Math.min(limit, 10_000))}`;
      return rows.map((r) => ({
        id: r.id,
        topic: r.topic,
        messageKey: r.message_key,
        eventType: r.type,
        version: r.version,
        bytes: r.bytes,
        createdAt: r.created_at,
        setAsideAt: r.set_aside_at,
        reason: r.set_aside_reason ?? "",
      }));
    },
    async requeue(ids) {
      const valid = ids.filter((id) => /^[1-9][0-9]{0,17}$/.test(id));
      if (valid.length === 0) return 0;
      const res = await sql`
        UPDATE outbox SET set_aside_at = NULL, set_aside_reason = NULL
        WHERE id = ANY(${valid}::bigint[]) AND set_aside_at IS NOT NULL`;
      return res.count;
    },
  };
}
