// The SQL of saved searches (migration 0042): saving one (the address, the search and its confirmation e-mail in one
// transaction), confirming, unsubscribing (the address goes with its last search), the digests that are due, and
// the clean-up of searches nobody confirmed. Tokens are random; only a confirmation token's hash is stored.
import { createHash, randomBytes } from "node:crypto";
import type postgres from "postgres";

type Sql = postgres.Sql | postgres.TransactionSql;

export const newToken = () => randomBytes(32).toString("base64url");
export const tokenHash = (token: string) => createHash("sha256").update(token).digest();
/** One subscriber per address, whatever its case. */
export const emailKey = (email: string) => email.trim().toLowerCase();

export interface ComposedMail {
  kind: "confirmation" | "digest" | "notice";
  recipient: string;
  subject: string;
  text: string;
  html: string;
  unsubscribeUrl: string;
}

export async function insertMail(tx: Sql, savedSearchId: string, mail: ComposedMail): Promise<void> {
  await tx`
    INSERT INTO saved_search_mail (saved_search_id, kind, recipient, subject, text_body, html_body, unsubscribe_url)
    VALUES (${savedSearchId}, ${mail.kind}, ${mail.recipient}, ${mail.subject}, ${mail.text}, ${mail.html}, ${mail.unsubscribeUrl})`;
}

export type SaveOutcome =
  /** A new search, or one still waiting for its confirmation: a confirmation is to be sent (its token). */
  | { kind: "pending"; savedSearchId: string; confirmToken: string; unsubscribeToken: string }
  /** The address already has this search, confirmed: nothing changes. */
  | { kind: "exists"; savedSearchId: string; unsubscribeToken: string }
  /** The address has as many searches as it may: nothing is saved; a notice may say so. */
  | { kind: "full"; savedSearchId: string | null; unsubscribeToken: string | null; count: number };

/**
 * Saves a search for an address, unconfirmed (double opt-in: nothing is sent to the address but the confirmation
 * before it is confirmed). A repeat of a search waiting for its confirmation gets a new confirmation token (the
 * newest e-mail's link works). Runs `compose` in the same transaction so the row and its e-mail commit together.
 */
export async function saveSearch(
  sql: postgres.Sql,
  args: { email: string; query: Record<string, string>; queryKey: string; label: string; maxPerAddress: number },
  compose: (outcome: SaveOutcome, tx: postgres.TransactionSql) => Promise<void>,
): Promise<SaveOutcome> {
  return sql.begin(async (tx) => {
    const key = emailKey(args.email);
    const [subscriber] = await tx<{ id: string }[]>`
      INSERT INTO saved_search_subscribers (email, email_key) VALUES (${args.email.trim()}, ${key})
      ON CONFLICT (email_key) DO UPDATE SET email = saved_search_subscribers.email
      RETURNING id::text AS id`;
    if (!subscriber) throw new Error("the subscriber upsert returned no row");
    const subscriberId = subscriber.id;
    // One save of an address at a time: the cap counts what the others committed.
    await tx`SELECT 1 FROM saved_search_subscribers WHERE id = ${subscriberId} FOR UPDATE`;
    const [same] = await tx<{ id: string; confirmed: boolean; unsubscribe_token: string }[]>`
      SELECT id::text AS id, confirmed_at IS NOT NULL AS confirmed, unsubscribe_token FROM saved_searches
      WHERE subscriber_id = ${subscriberId} AND query_key = ${args.queryKey}`;
    let outcome: SaveOutcome;
    if (same?.confirmed) {
      outcome = { kind: "exists", savedSearchId: same.id, unsubscribeToken: same.unsubscribe_token };
    } else if (same) {
      const confirmToken = newToken();
      await tx`UPDATE saved_searches SET confirm_token_hash = ${tokenHash(confirmToken)}, created_at = now() WHERE id = ${same.id}`;
      outcome = { kind: "pending", savedSearchId: same.id, confirmToken, unsubscribeToken: same.unsubscribe_token };
    } else {
      const [counted] = await tx<{ count: number }[]>`
        SELECT count(*)::int AS count FROM saved_searches WHERE subscriber_id = ${subscriberId}`;
      const count = counted?.count ?? 0;
      if (count >= args.maxPerAddress) {
        // The notice goes out as one of the address's searches (its unsubscribe link is that search's).
        const [any] = await tx<{ id: string; unsubscribe_token: string }[]>`
          SELECT id::text AS id, unsubscribe_token FROM saved_searches WHERE subscriber_id = ${subscriberId} ORDER BY id LIMIT 1`;
        outcome = {
          kind: "full",
          savedSearchId: any?.id ?? null,
          unsubscribeToken: any?.unsubscribe_token ?? null,
          count,
        };
      } else {
        const confirmToken = newToken();
        const unsubscribeToken = newToken();
        const [row] = await tx<{ id: string }[]>`
          INSERT INTO saved_searches (subscriber_id, query, query_key, label, confirm_token_hash, unsubscribe_token)
          VALUES (${subscriberId}, ${tx.json(args.query)}, ${args.queryKey}, ${args.label}, ${tokenHash(confirmToken)}, ${unsubscribeToken})
          RETURNING id::text AS id`;
        if (!row) throw new Error("the saved search insert returned no row");
        outcome = { kind: "pending", savedSearchId: row.id, confirmToken, unsubscribeToken };
      }
    }
    await compose(outcome, tx);
    return outcome;
  });
}

export interface SavedSearchRow {
  id: string;
  email: string;
  query: Record<string, string>;
  label: string;
  confirmed: boolean;
  unsubscribeToken: string;
}

const SAVED_SEARCH_COLUMNS = (sql: Sql) => sql`
  s.id::text AS id, u.email, s.query, s.label, s.confirmed_at IS NOT NULL AS confirmed, s.unsubscribe_token`;

const toRow = (r: postgres.Row): SavedSearchRow => ({
  id: r.id,
  email: r.email,
  query: r.query,
  label: r.label,
  confirmed: r.confirmed,
  unsubscribeToken: r.unsubscribe_token,
});

/** A search waiting for its confirmation, by the token in the link; null when unknown or older than `maxAgeHours`. */
export async function findByConfirmToken(sql: Sql, token: string, maxAgeHours: number): Promise<SavedSearchRow | null> {
  const [row] = await sql`
    SELECT ${SAVED_SEARCH_COLUMNS(sql)} FROM saved_searches s JOIN saved_search_subscribers u ON u.id = s.subscriber_id
    WHERE s.confirm_token_hash = ${tokenHash(token)} AND s.created_at > now() - ${maxAgeHours}::int * interval '1 hour'`;
  return row ? toRow(row) : null;
}

/**
 * Confirms the search the token names: from now on its digests are due every `intervalSeconds`, with what is listed
 * or reduced after this moment. Null when the token is unknown or expired (a second click finds nothing: the token
 * is gone once used).
 */
export async function confirmSearch(
  sql: postgres.Sql,
  token: string,
  maxAgeHours: number,
  intervalSeconds: number,
): Promise<SavedSearchRow | null> {
  const [row] = await sql`
    WITH confirmed AS (
      UPDATE saved_searches SET confirmed_at = now(), confirm_token_hash = NULL, alerted_through = now(),
        next_digest_at = now() + ${intervalSeconds}::int * interval '1 second'
      WHERE confirm_token_hash = ${tokenHash(token)} AND created_at > now() - ${maxAgeHours}::int * interval '1 hour'
      RETURNING *
    )
    SELECT ${SAVED_SEARCH_COLUMNS(sql)} FROM confirmed s JOIN saved_search_subscribers u ON u.id = s.subscriber_id`;
  return row ? toRow(row) : null;
}

export async function findByUnsubscribeToken(sql: Sql, token: string): Promise<SavedSearchRow | null> {
  const [row] = await sql`
    SELECT ${SAVED_SEARCH_COLUMNS(sql)} FROM saved_searches s JOIN saved_search_subscribers u ON u.id = s.subscriber_id
    WHERE s.unsubscribe_token = ${token}`;
  return row ? toRow(row) : null;
}

/**
 * Removes the search the token names, with its unsent mail; the address goes too when it was its last search.
 * The label of what was removed, or null when nothing was (unknown token, or removed before: a repeat is harmless).
 */
export async function unsubscribe(sql: postgres.Sql, token: string): Promise<string | null> {
  return sql.begin(async (tx) => {
    const [removed] = await tx<{ label: string; subscriber_id: string }[]>`
      DELETE FROM saved_searches WHERE unsubscribe_token = ${token} RETURNING label, subscriber_id::text AS subscriber_id`;
    if (!removed) return null;
    await tx`
      DELETE FROM saved_search_subscribers u WHERE u.id = ${removed.subscriber_id}
        AND NOT EXISTS (SELECT 1 FROM saved_searches s WHERE s.subscriber_id = u.id)`;
    return removed.label;
  });
}

/** Searches nobody confirmed within `maxAgeHours`, and the addresses left without a search: how many searches. */
export async function deleteUnconfirmed(sql: postgres.Sql, maxAgeHours: number): Promise<number> {
  return sql.begin(async (tx) => {
    const gone = await tx`
      DELETE FROM saved_searches WHERE confirmed_at IS NULL AND created_at <= now() - ${maxAgeHours}::int * interval '1 hour'
      RETURNING subscriber_id`;
    if (gone.length)
      await tx`
        DELETE FROM saved_search_subscribers u WHERE u.id = ANY(${gone.map((g) => g.subscriber_id)}::bigint[])
          AND NOT EXISTS (SELECT 1 FROM saved_searches s WHERE s.subscriber_id = u.id)`;
    return gone.length;
  });
}

export interface DueDigest extends SavedSearchRow {
  /** Listings listed or reduced after this moment are new to it. */
  alertedThrough: Date;
}

/**
 * Runs `work` for up to `limit` confirmed searches whose digest is due, each locked (SKIP LOCKED: instances share the
 * work, none takes a search another is on), in the transaction that records the digest; how many were due.
 */
export async function forDueDigests(
  sql: postgres.Sql,
  limit: number,
  work: (due: DueDigest, tx: postgres.TransactionSql) => Promise<void>,
): Promise<number> {
  return sql.begin(async (tx) => {
    const rows = await tx`
      SELECT ${SAVED_SEARCH_COLUMNS(tx)}, s.alerted_through
      FROM saved_searches s JOIN saved_search_subscribers u ON u.id = s.subscriber_id
      WHERE s.confirmed_at IS NOT NULL AND s.next_digest_at <= now()
      ORDER BY s.next_digest_at LIMIT ${limit}
      FOR UPDATE OF s SKIP LOCKED`;
    for (const r of rows) await work({ ...toRow(r), alertedThrough: r.alerted_through }, tx);
    return rows.length;
  });
}

/** After a digest (sent or, with nothing new, not): new from `through`, the next one `intervalSeconds` from now. */
export async function advanceDigest(
  tx: postgres.TransactionSql,
  savedSearchId: string,
  through: Date,
  intervalSeconds: number,
): Promise<void> {
  await tx`
    UPDATE saved_searches SET alerted_through = ${through},
      next_digest_at = now() + ${intervalSeconds}::int * interval '1 second'
    WHERE id = ${savedSearchId}`;
}
