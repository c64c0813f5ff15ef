// SQL for media work. The rows decide what to do, never the event: only pending photos and avatars are claimed,
// and every result is written with a guard, so a late write for a URL removed or replaced meanwhile changes nothing.
// Every claim also takes a new fencing token (claim_token / avatar_claim_token + 1, migration 0019) and every later
// write carries it: a worker whose claim ran out and was taken by another instance changes nothing when it ends.
import {
  BrokerAvatarProcessed,
  brokerAvatarProcessedFact,
  ListingMediaProcessed,
  listingMediaProcessedFact,
  type RecordMode,
} from "@pss/contracts";
import { insertOutboxFacts, partnerFactRow, sqlJson } from "@pss/service-kit";
import type postgres from "postgres";

type Sql = postgres.Sql;

/** claimToken: this claim's fencing token; results and renewals apply only while the row still carries it. */
export type MediaJob =
  | { kind: "photo"; photoId: string; listingId: string; url: string; attempts: number; claimToken: number }
  | { kind: "avatar"; brokerId: string; url: string; attempts: number; claimToken: number };

/** A variant as stored: its media key (the content-addressed name), never a URL; readers build URLs from configuration. */
export interface VariantRecord {
  width: number;
  height: number;
  format: "webp" | "jpeg";
  key: string;
}

export interface ReadyResult {
  width: number;
  height: number;
  warning: string | null;
  variants: VariantRecord[];
  /** Stored file names the variants point to: what the garbage collector checks. */
  names: string[];
}

/** Scope a claim to some partners (tests, benchmark); null means all. */
export type PartnerScope = readonly string[] | null;

const lease = (sql: Sql, ms: number) => sql`now() + (${ms}::int * interval '1 millisecond')`;
const scoped = (sql: Sql, column: postgres.Fragment, partners: PartnerScope) =>
  partners ? sql`AND ${column} = ANY(${partners as string[]}::uuid[])` : sql``;

const toPhoto = (r: postgres.Row): MediaJob => ({
  kind: "photo",
  photoId: r.id,
  listingId: r.listing_id,
  url: r.url,
  attempts: r.attempts,
  claimToken: r.claim_token,
});
const toAvatar = (r: postgres.Row): MediaJob => ({
  kind: "avatar",
  brokerId: r.id,
  url: r.avatar_url,
  attempts: r.avatar_attempts,
  claimToken: r.avatar_claim_token,
});

/**
 * The lock of one stored name (garbage-collector.ts): writers hold it shared from checking their files are
 * stored until their reference commits; the collector holds it exclusively from its last reference check until
 * the file is deleted. So a file is never deleted between a writer's check and its commit.
 */
const nameLock = (q: Sql | postgres.TransactionSql, name: postgres.Fragment | string) =>
  q`hashtextextended('pss.media-name:' || ${name}, 0)`;

/** Shared locks on the names (they never wait for each other; only for a collector deleting one of them). */
async function lockNamesShared(tx: postgres.TransactionSql, names: string[]): Promise<void> {
  if (names.length === 0) return;
  await tx`SELECT pg_advisory_xact_lock_shared(${nameLock(tx, tx`n`)}) FROM unnest(${[...new Set(names)].sort()}::text[]) AS n`;
}

/** The given stored names that no listing photo and no current avatar references. */
async function unreferencedIn(q: Sql | postgres.TransactionSql, names: string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const rows = await q`
    SELECT n FROM unnest(${names}::text[]) AS n
    WHERE NOT EXISTS (SELECT 1 FROM listing_photos WHERE media_names @> ARRAY[n])
      -- The API clears avatar_variants when the URL changes but knows nothing of avatar_media_names.
      AND NOT EXISTS (SELECT 1 FROM brokers WHERE avatar_variants IS NOT NULL AND avatar_media_names @> ARRAY[n])`;
  return rows.map((r) => r.n as string);
}

/**
 * Writes a photo's outcome; when it was the listing's last pending photo, also the listing.media.processed fact
 * with every photo's outcome. Photos of one listing finish one transaction at a time (an advisory lock on the
 * listing), so exactly one of two photos finishing together sees "none pending" and announces it.
 */
async function finishPhotoIn(
  sql: Sql,
  job: Extract<MediaJob, { kind: "photo" }>,
  write: (tx: postgres.TransactionSql) => PromiseLike<readonly unknown[]>,
): Promise<boolean> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`pss.listing-photos:${job.listingId}`}, 0))`;
    const written = await write(tx);
    if (written.length === 0) return false;
    // Read after the lock and this transaction's write (both in one round trip): the listing's photos as they will
    // commit; the listing only when none is pending any more.
    const [[listing], photos] = await Promise.all([
      tx<{ id: string; partner_id: string; mode: RecordMode; external_id: string; version: number }[]>`
        SELECT l.id, l.partner_id, l.mode, l.external_id, l.version FROM listings l
        WHERE l.id = ${job.listingId}::bigint AND NOT EXISTS (SELECT 1 FROM listing_photos p WHERE p.listing_id = l.id AND p.state = 'pending')`,
      tx<PhotoOutcomeRow[]>`
        SELECT url, sort_key, state, failure_reason, warning, width, height FROM listing_photos WHERE listing_id = ${job.listingId}::bigint ORDER BY sort_key, id`,
    ]);
    if (listing) {
      const fact = partnerFactRow(
        ListingMediaProcessed,
        {
          aggregateId: String(listing.id),
          version: listing.version,
          partnerId: listing.partner_id,
          mode: listing.mode,
        },
        listingMediaProcessedFact(
          { id: listing.id, external_id: listing.external_id, version: listing.version },
          photos,
        ),
      );
      await insertOutboxFacts(tx, [fact]);
    }
    return true;
  });
}

type PhotoOutcomeRow = {
  url: string;
  sort_key: number;
  state: "ready" | "failed";
  failure_reason: string | null;
  warning: string | null;
  width: number | null;
  height: number | null;
};

/** The broker row an avatar's outcome was recorded on (the UPDATE's RETURNING). */
type FinishedAvatarRow = {
  id: string;
  partner_id: string;
  mode: RecordMode;
  external_id: string;
  version: number;
  avatar_url: string;
  avatar_state: "ready" | "failed";
  avatar_failure_reason: string | null;
  avatar_warning: string | null;
  avatar_width: number | null;
  avatar_height: number | null;
};
const FINISHED_AVATAR =
  "id, partner_id, mode, external_id, version, avatar_url, avatar_state, avatar_failure_reason, avatar_warning, avatar_width, avatar_height";

/** broker.avatar.processed from the broker row whose avatar outcome was just recorded, in the same transaction. */
async function announceAvatar(tx: postgres.TransactionSql, rows: readonly FinishedAvatarRow[]): Promise<void> {
  await insertOutboxFacts(
    tx,
    rows.map((f) =>
      partnerFactRow(
        BrokerAvatarProcessed,
        { aggregateId: String(f.id), version: f.version, partnerId: f.partner_id, mode: f.mode },
        brokerAvatarProcessedFact(f, {
          url: f.avatar_url,
          state: f.avatar_state,
          failure_reason: f.avatar_failure_reason,
          warning: f.avatar_warning,
          width: f.avatar_width,
          height: f.avatar_height,
        }),
      ),
    ),
  );
}

export function createMediaRepository(sql: Sql) {
  const finishPhoto = (
    job: Extract<MediaJob, { kind: "photo" }>,
    write: (tx: postgres.TransactionSql) => PromiseLike<readonly unknown[]>,
  ) => finishPhotoIn(sql, job, write);
  return {
    async listingVersion(listingId: string): Promise<number | null> {
      const [row] = await sql`SELECT version FROM listings WHERE id = ${listingId}::bigint`;
      return row ? row.version : null;
    },

    async brokerVersion(brokerId: string): Promise<number | null> {
      const [row] = await sql`SELECT version FROM brokers WHERE id = ${brokerId}::bigint`;
      return row ? row.version : null;
    },

    /** Claims the listing's pending photos that nobody holds and that are not waiting for a retry. */
    async claimListingPhotos(listingId: string, leaseMs: number): Promise<MediaJob[]> {
      const rows = await sql`
        UPDATE listing_photos SET attempts = attempts + 1, claim_token = claim_token + 1, not_before = ${lease(sql, leaseMs)}
        WHERE listing_id = ${listingId}::bigint AND state = 'pending' AND (not_before IS NULL OR not_before <= now())
        RETURNING id::text AS id, listing_id::text AS listing_id, url, attempts, claim_token`;
      return rows.map(toPhoto);
    },

    async claimAvatar(brokerId: string, leaseMs: number): Promise<MediaJob | null> {
      const [row] = await sql`
        UPDATE brokers SET
          avatar_attempts = CASE WHEN avatar_attempt_url IS NOT DISTINCT FROM avatar_url THEN avatar_attempts + 1 ELSE 1 END,
          avatar_attempt_url = avatar_url,
          avatar_claim_token = avatar_claim_token + 1,
          avatar_not_before = ${lease(sql, leaseMs)}
        WHERE id = ${brokerId}::bigint AND avatar_state = 'pending' AND avatar_url IS NOT NULL
          AND (avatar_not_before IS NULL OR avatar_not_before <= now() OR avatar_attempt_url IS DISTINCT FROM avatar_url)
        RETURNING id::text AS id, avatar_url, avatar_attempts, avatar_claim_token`;
      return row ? toAvatar(row) : null;
    },

    /** Claims work whose retry is due, or whose claim expired (its worker died). Safe across instances. */
    async claimDue(limit: number, leaseMs: number, partners: PartnerScope): Promise<MediaJob[]> {
      const photos = await sql`
        UPDATE listing_photos p SET attempts = p.attempts + 1, claim_token = p.claim_token + 1, not_before = ${lease(sql, leaseMs)}
        WHERE p.id IN (
          SELECT d.id FROM listing_photos d JOIN listings l ON l.id = d.listing_id
          -- attempts 0 with a last error: given back unspent (postpone) before its first attempt ended.
          WHERE d.state = 'pending' AND (d.attempts > 0 OR d.last_error IS NOT NULL) AND d.not_before <= now() ${scoped(sql, sql`l.partner_id`, partners)}
          ORDER BY d.not_before LIMIT ${limit} FOR UPDATE OF d SKIP LOCKED)
        RETURNING p.id::text AS id, p.listing_id::text AS listing_id, p.url, p.attempts, p.claim_token`;
      const avatars = await sql`
        UPDATE brokers b SET avatar_attempts = b.avatar_attempts + 1, avatar_claim_token = b.avatar_claim_token + 1, avatar_not_before = ${lease(sql, leaseMs)}
        WHERE b.id IN (
          SELECT d.id FROM brokers d
          WHERE d.avatar_state = 'pending' AND (d.avatar_attempts > 0 OR d.avatar_last_error IS NOT NULL) AND d.avatar_not_before <= now() AND d.avatar_url IS NOT NULL
            AND d.avatar_attempt_url = d.avatar_url ${scoped(sql, sql`d.partner_id`, partners)}
          ORDER BY d.avatar_not_before LIMIT ${limit} FOR UPDATE OF d SKIP LOCKED)
        RETURNING b.id::text AS id, b.avatar_url, b.avatar_attempts, b.avatar_claim_token`;
      return [...photos.map(toPhoto), ...avatars.map(toAvatar)];
    },

    /**
     * Extends the claims this instance still holds on jobs it is working on: the row's fencing token must be the
     * job's (a claim that ran out and was taken by another instance has a newer one). Returns how many held.
     */
    async renewClaims(jobs: MediaJob[], leaseMs: number): Promise<number> {
      const photos = jobs.filter((j) => j.kind === "photo");
      const avatars = jobs.filter((j) => j.kind === "avatar");
      let held = 0;
      if (photos.length > 0) {
        const rows = await sql`
          UPDATE listing_photos p SET not_before = ${lease(sql, leaseMs)}
          FROM unnest(${photos.map((j) => j.photoId)}::bigint[], ${photos.map((j) => j.claimToken)}::int[]) AS c(id, token)
          WHERE p.id = c.id AND p.claim_token = c.token AND p.state = 'pending' RETURNING p.id`;
        held += rows.length;
      }
      if (avatars.length > 0) {
        const rows = await sql`
          UPDATE brokers b SET avatar_not_before = ${lease(sql, leaseMs)}
          FROM unnest(${avatars.map((j) => j.brokerId)}::bigint[], ${avatars.map((j) => j.claimToken)}::int[]) AS c(id, token)
          WHERE b.id = c.id AND b.avatar_claim_token = c.token AND b.avatar_state = 'pending' RETURNING b.id`;
        held += rows.length;
      }
      return held;
    },

    /**
     * False when the photo was removed, replaced or finished meanwhile, or its claim was taken over: nothing was
     * written. The photo or avatar that finishes its record's processing also announces it (webhooks), in the same
     * transaction. `confirmStored` runs while the result's names are locked against the garbage collector, before
     * the reference commits: it makes sure every file is (still) stored, storing again any the collector removed.
     * It must not wait for the store (it runs with the listing's lock and a connection held): a store that does not
     * answer makes it throw, which rolls the transaction back; the caller waits outside and calls again.
     */
    async markReady(
      job: MediaJob,
      r: ReadyResult,
      confirmStored: () => Promise<void> = async () => {},
    ): Promise<boolean> {
      const variants = sqlJson(sql, r.variants);
      if (job.kind === "photo") {
        return finishPhoto(job, async (tx) => {
          await lockNamesShared(tx, r.names);
          await confirmStored();
          return tx`
            UPDATE listing_photos SET state = 'ready', width = ${r.width}, height = ${r.height}, warning = ${r.warning}, variants = ${variants},
              media_names = ${r.names}::text[], failure_reason = NULL, last_error = NULL, not_before = NULL, updated_at = now()
            WHERE id = ${job.photoId}::bigint AND url = ${job.url} AND state = 'pending' AND claim_token = ${job.claimToken} RETURNING id`;
        });
      }
      return sql.begin(async (tx) => {
        await lockNamesShared(tx, r.names);
        await confirmStored();
        const rows = await tx<FinishedAvatarRow[]>`
          UPDATE brokers SET avatar_state = 'ready', avatar_width = ${r.width}, avatar_height = ${r.height}, avatar_warning = ${r.warning},
            avatar_variants = ${variants}, avatar_media_names = ${r.names}::text[], avatar_failure_reason = NULL, avatar_last_error = NULL,
            avatar_not_before = NULL
          WHERE id = ${job.brokerId}::bigint AND avatar_url = ${job.url} AND avatar_state = 'pending' AND avatar_claim_token = ${job.claimToken}
          RETURNING ${tx.unsafe(FINISHED_AVATAR)}`;
        await announceAvatar(tx, rows);
        return rows.length > 0;
      });
    },

    async markFailed(job: MediaJob, reason: string): Promise<boolean> {
      if (job.kind === "photo") {
        return finishPhoto(
          job,
          (tx) => tx`
            UPDATE listing_photos SET state = 'failed', failure_reason = ${reason}, last_error = ${reason}, warning = NULL, width = NULL,
              height = NULL, variants = NULL, media_names = NULL, not_before = NULL, updated_at = now()
            WHERE id = ${job.photoId}::bigint AND url = ${job.url} AND state = 'pending' AND claim_token = ${job.claimToken} RETURNING id`,
        );
      }
      // The outcome and its fact commit together (two statements: the fact is built from the row written).
      return sql.begin(async (tx) => {
        const rows = await tx<FinishedAvatarRow[]>`
          UPDATE brokers SET avatar_state = 'failed', avatar_failure_reason = ${reason}, avatar_last_error = ${reason}, avatar_warning = NULL,
            avatar_width = NULL, avatar_height = NULL, avatar_variants = NULL, avatar_media_names = NULL, avatar_not_before = NULL
          WHERE id = ${job.brokerId}::bigint AND avatar_url = ${job.url} AND avatar_state = 'pending' AND avatar_claim_token = ${job.claimToken}
          RETURNING ${tx.unsafe(FINISHED_AVATAR)}`;
        await announceAvatar(tx, rows);
        return rows.length > 0;
      });
    },

    /** Keeps the job pending and releases it for another attempt after delayMs. */
    async retryLater(job: MediaJob, reason: string, delayMs: number): Promise<boolean> {
      const rows =
        job.kind === "photo"
          ? await sql`
            UPDATE listing_photos SET not_before = ${lease(sql, delayMs)}, last_error = ${reason}
            WHERE id = ${job.photoId}::bigint AND url = ${job.url} AND state = 'pending' AND claim_token = ${job.claimToken} RETURNING id`
          : await sql`
            UPDATE brokers SET avatar_not_before = ${lease(sql, delayMs)}, avatar_last_error = ${reason}
            WHERE id = ${job.brokerId}::bigint AND avatar_url = ${job.url} AND avatar_state = 'pending' AND avatar_claim_token = ${job.claimToken} RETURNING id`;
      return rows.length > 0;
    },

    /**
     * Gives a claim back without spending its attempt (one of our dependencies was down, not the image's fault):
     * still pending, due after delayMs, the attempt the claim counted taken back. Only that claim can do it.
     */
    async postpone(job: MediaJob, reason: string, delayMs: number): Promise<boolean> {
      const rows =
        job.kind === "photo"
          ? await sql`
            UPDATE listing_photos SET attempts = attempts - 1, not_before = ${lease(sql, delayMs)}, last_error = ${reason}
            WHERE id = ${job.photoId}::bigint AND url = ${job.url} AND state = 'pending' AND claim_token = ${job.claimToken} RETURNING id`
          : await sql`
            UPDATE brokers SET avatar_attempts = avatar_attempts - 1, avatar_not_before = ${lease(sql, delayMs)}, avatar_last_error = ${reason}
            WHERE id = ${job.brokerId}::bigint AND avatar_url = ${job.url} AND avatar_state = 'pending' AND avatar_claim_token = ${job.claimToken} RETURNING id`;
      return rows.length > 0;
    },

    /** The given stored names that no listing photo and no current avatar references (a first, unlocked look). */
    unreferenced: (names: string[]): Promise<string[]> => unreferencedIn(sql, names),

    /**
     * Runs `remove` holding the name's lock exclusively, when no writer holds it and nothing references the name
     * now; false otherwise (or when `remove` says so). The lock is only tried, never waited for: the collector
     * never queues in front of writers, and a name a writer holds is being referenced anyway.
     */
    async whileUnreferenced(name: string, remove: () => Promise<boolean>): Promise<boolean> {
      return sql.begin(async (tx) => {
        const [lock] = await tx`SELECT pg_try_advisory_xact_lock(${nameLock(tx, name)}) AS got`;
        if (!lock?.got) return false;
        if ((await unreferencedIn(tx, [name])).length === 0) return false;
        return remove();
      });
    },
  };
}

export type MediaRepository = ReturnType<typeof createMediaRepository>;
