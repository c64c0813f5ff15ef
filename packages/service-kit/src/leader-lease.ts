// "One instance at a time" for background work (the outbox relay, the media garbage collector, the search
// reconciler, a reindex) as a lease row in PostgreSQL (table leader_leases, migration 0017), not a session
// advisory lock: a session lock lives on one server connection, and behind PgBouncer in transaction pooling
// consecutive statements of one client connection run on different server connections, so the lock would be
// taken on one, "released" on another and leak. Every lease statement is a single autocommitted statement:
// it works the same on a direct connection and through any pooler.
//
// The database's clock decides who holds a lease (expires_at against now()); the holder's own clock only decides
// when to renew and when to stop trusting it: a holder treats the lease as lost once ttlMs have passed since it
// sent its last successful renewal, which is never later than the database lets it run out. An instance that
// dies (SIGKILL, host lost) stops renewing, and another takes over within ttlMs; one that stops releases at once.
// A holder stalled longer than the lease (a frozen VM) may act once more after another took over: work done
// under a lease must tolerate that (the relay's duplicates are absorbed by idempotent consumers).
import { hostname } from "node:os";
import type postgres from "postgres";

export interface LeaderLease {
  readonly name: string;
  readonly holder: string;
  /** Takes the lease when it is free or ran out, renews it when this holder has it; true when held now. */
  acquire(): Promise<boolean>;
  /** Renews when a third of the lease has passed since the last renewal; false when it is not held any more. */
  renewIfDue(): Promise<boolean>;
  /** Held (by this holder's clock) for at least marginMs more. */
  isHeld(marginMs?: number): boolean;
  /**
   * While held, renews every third of the lease in the background (work under the lease may wait long on
   * something else, a Kafka send, a page of a reindex) until the returned function is called or the lease is lost.
   */
  keepRenewed(): () => void;
  /** Gives the lease up now, so another instance can take it at its next try. */
  release(): Promise<void>;
}

/** Who holds a lease, for operators: host, process and a random part (two processes may share a PID namespace). */
export function leaseHolderId(): string {
  return `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
}

export function createLeaderLease(deps: {
  sql: postgres.Sql;
  name: string;
  ttlMs: number;
  holder?: string;
}): LeaderLease {
  const { sql, name, ttlMs } = deps;
  if (!Number.isInteger(ttlMs) || ttlMs < 1000) throw new Error(`a lease lasts at least 1000 ms, got ${ttlMs}`);
  const holder = deps.holder ?? leaseHolderId();
  /** performance.now() when the last successful take or renewal was sent; null while not held. */
  let renewedAt: number | null = null;

  async function acquire(): Promise<boolean> {
    const sentAt = performance.now();
    // On an error the outcome is unknown: the lease stays trusted only as long as the last confirmed renewal allows.
    const rows = await sql<{ holder: string }[]>`
      INSERT INTO leader_leases AS l (name, holder, acquired_at, renewed_at, expires_at)
      VALUES (${name}, ${holder}, now(), now(), now() + ${ttlMs}::int * interval '1 millisecond')
      ON CONFLICT (name) DO UPDATE SET
        holder = EXCLUDED.holder,
        acquired_at = CASE WHEN l.holder = EXCLUDED.holder THEN l.acquired_at ELSE now() END,
        renewed_at = now(),
        expires_at = EXCLUDED.expires_at
      WHERE l.holder = EXCLUDED.holder OR l.expires_at < now()
      RETURNING holder`;
    renewedAt = rows.length > 0 ? sentAt : null;
    return renewedAt !== null;
  }

  const isHeld = (marginMs = 0) => renewedAt !== null && performance.now() - renewedAt + marginMs < ttlMs;

  return {
    name,
    holder,
    acquire,
    async renewIfDue() {
      if (!isHeld()) return false;
      if (performance.now() - renewedAt! < ttlMs / 3) return true;
      return acquire();
    },
    isHeld,
    keepRenewed() {
      let busy = false;
      const timer = setInterval(
        async () => {
          if (busy) return;
          busy = true;
          try {
            if (!(await acquire())) clearInterval(timer);
          } catch {
            // PostgreSQL briefly away: the next tick tries again while the lease is still trusted.
            if (!isHeld()) clearInterval(timer);
          } finally {
            busy = false;
          }
        },
        Math.floor(ttlMs / 3),
      );
      return () => clearInterval(timer);
    },
    async release() {
      const wasHeld = renewedAt !== null;
      renewedAt = null;
      if (wasHeld) await sql`DELETE FROM leader_leases WHERE name = ${name} AND holder = ${holder}`;
    },
  };
}

/**
 * One round of work under a lease taken for that round (the retention job, the media garbage collector): null when
 * another instance holds it; renewed while the work runs, given up when it ends, whether it succeeded or not.
 */
export async function whileLeading<T>(
  lease: LeaderLease,
  logger: { warn(msg: string, fields?: Record<string, unknown>): void },
  work: () => Promise<T>,
): Promise<T | null> {
  if (!(await lease.acquire())) return null;
  const stopRenewing = lease.keepRenewed();
  try {
    return await work();
  } finally {
    stopRenewing();
    await lease.release().catch((err) =>
      logger.warn(`releasing the lease "${lease.name}" failed; it runs out on its own`, {
        err: (err as Error).message,
      }),
    );
  }
}
