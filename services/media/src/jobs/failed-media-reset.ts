// Gives failed photos and avatars another go (admin CLI `media retry`): the rows go back to pending, due now,
// so the media service's retry loop (retry-loop.ts) claims them within MEDIA_RETRY_POLL_MS; no event is needed.
// The loop only takes rows that already had an attempt, so a reset row counts as attempt 1 and has
// MEDIA_MAX_ATTEMPTS − 1 tries left (at least one). A photo whose URL changed meanwhile is not touched: the
// API already reset it.
import type postgres from "postgres";
import { isTransientReason } from "../failures.ts";

export type ResetScope = { listingId: string } | { partnerId: string } | { transientOnly: true };

export interface ResetResult {
  photos: { photoId: string; listingId: string; url: string; reason: string | null }[];
  avatars: { brokerId: string; url: string; reason: string | null }[];
}

export function createFailedMediaReset(deps: { sql: postgres.Sql }) {
  const { sql } = deps;

  /** The failure reasons recorded now that another attempt may fix. */
  async function transientReasons(): Promise<string[]> {
    const rows = await sql`
      SELECT DISTINCT failure_reason AS reason FROM listing_photos WHERE state = 'failed' AND failure_reason IS NOT NULL
      UNION SELECT DISTINCT avatar_failure_reason FROM brokers WHERE avatar_state = 'failed' AND avatar_failure_reason IS NOT NULL`;
    return rows.map((r) => r.reason as string).filter(isTransientReason);
  }

  return {
    async reset(scope: ResetScope): Promise<ResetResult> {
      let photoFilter: postgres.Fragment;
      let avatarFilter: postgres.Fragment;
      if ("listingId" in scope) {
        photoFilter = sql`AND l.id = ${scope.listingId}::bigint`;
        avatarFilter = sql`AND false`;
      } else if ("partnerId" in scope) {
        photoFilter = sql`AND l.partner_id = ${scope.partnerId}::uuid`;
        avatarFilter = sql`AND b.partner_id = ${scope.partnerId}::uuid`;
      } else {
        const reasons = await transientReasons();
        if (reasons.length === 0) return { photos: [], avatars: [] };
        photoFilter = sql`AND p.failure_reason = ANY(${reasons}::text[])`;
        avatarFilter = sql`AND b.avatar_failure_reason = ANY(${reasons}::text[])`;
      }
      return sql.begin(async (tx) => {
        const photos = await tx`
          WITH target AS (
            SELECT p.id, p.failure_reason FROM listing_photos p JOIN listings l ON l.id = p.listing_id
            WHERE p.state = 'failed' ${photoFilter}
            FOR UPDATE OF p)
          UPDATE listing_photos p SET state = 'pending', attempts = 1, not_before = now(), failure_reason = NULL, updated_at = now()
          FROM target WHERE p.id = target.id AND p.state = 'failed'
          RETURNING p.id::text AS id, p.listing_id::text AS listing_id, p.url, target.failure_reason AS reason`;
        const avatars = await tx`
          WITH target AS (
            SELECT b.id, b.avatar_failure_reason FROM brokers b
            WHERE b.avatar_state = 'failed' AND b.avatar_url IS NOT NULL ${avatarFilter}
            FOR UPDATE OF b)
          UPDATE brokers b SET avatar_state = 'pending', avatar_attempts = 1, avatar_attempt_url = b.avatar_url,
            avatar_not_before = now(), avatar_failure_reason = NULL
          FROM target WHERE b.id = target.id AND b.avatar_state = 'failed'
          RETURNING b.id::text AS id, b.avatar_url AS url, target.avatar_failure_reason AS reason`;
        return {
          photos: photos.map((r) => ({ photoId: r.id, listingId: r.listing_id, url: r.url, reason: r.reason })),
          avatars: avatars.map((r) => ({ brokerId: r.id, url: r.url, reason: r.reason })),
        };
      });
    },
  };
}

export type FailedMediaReset = ReturnType<typeof createFailedMediaReset>;
