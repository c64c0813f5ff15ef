// Portal sessions in PostgreSQL (portal_sessions, migration 0044). The browser holds a random token in an httpOnly
// cookie; the table holds its SHA-256. A session ends after 8 hours without a request (idle) or 7 days after it
// began (absolute), at sign-out, and everywhere at once when the person signs out everywhere or is removed.
import type postgres from "postgres";
import { isTokenText, newToken, sha256 } from "./tokens.ts";

export const SESSION_IDLE_MS = 8 * 3600_000;
export const SESSION_ABSOLUTE_MS = 7 * 24 * 3600_000;
/** last_seen_at is written at most this often per session (the idle expiry is that precise). */
const TOUCH_INTERVAL_MS = 60_000;

export interface Viewer {
  userId: string;
  email: string;
  partnerId: string;
  partnerName: string;
  /** Sees lead figures (portal_users.lead_access). */
  leadAccess: boolean;
  /** The session cookie: the secret the forms' CSRF tokens are derived from. */
  sessionToken: string;
}

export interface Sessions {
  /** A new session for the user: its token, for the cookie. */
  create(tx: postgres.Sql | postgres.TransactionSql, userId: string): Promise<string>;
  /** The signed-in person, or null (no such session, ended, idle too long, past its absolute expiry). */
  find(token: string | undefined): Promise<Viewer | null>;
  end(token: string): Promise<void>;
  endAll(userId: string): Promise<number>;
  /** Deletes expired sessions, used or expired links and old sign-in requests (the portal's cleanup job). */
  cleanUp(): Promise<{ sessions: number; links: number; requests: number }>;
}

export function createSessions(deps: { sql: postgres.Sql; onError?: (err: Error) => void }): Sessions {
  const { sql } = deps;
  return {
    async create(tx, userId) {
      const token = newToken();
      await tx`
        INSERT INTO portal_sessions (id_hash, user_id, expires_at)
        VALUES (${sha256(token)}, ${userId}::bigint, now() + ${SESSION_ABSOLUTE_MS}::float8 * interval '1 millisecond')`;
      return token;
    },
    async find(token) {
      if (!isTokenText(token)) return null;
      const hash = sha256(token);
      const [row] = await sql`
        SELECT u.id::text AS user_id, u.email, u.lead_access, u.partner_id::text AS partner_id, p.name AS partner_name,
               (s.last_seen_at < now() - ${TOUCH_INTERVAL_MS}::float8 * interval '1 millisecond') AS stale
        FROM portal_sessions s JOIN portal_users u ON u.id = s.user_id JOIN partners p ON p.id = u.partner_id
        WHERE s.id_hash = ${hash} AND s.expires_at > now()
          AND s.last_seen_at > now() - ${SESSION_IDLE_MS}::float8 * interval '1 millisecond'`;
      if (!row) return null;
      if (row.stale)
        // Off the page's path: a lost touch only shortens the idle window by a minute.
        sql`UPDATE portal_sessions SET last_seen_at = now() WHERE id_hash = ${hash}`.catch((err: Error) =>
          deps.onError?.(err),
        );
      return {
        userId: row.user_id,
        email: row.email,
        partnerId: row.partner_id,
        partnerName: row.partner_name,
        leadAccess: row.lead_access,
        sessionToken: token,
      };
    },
    async end(token) {
      if (!isTokenText(token)) return;
      await sql`DELETE FROM portal_sessions WHERE id_hash = ${sha256(token)}`;
    },
    async endAll(userId) {
      const rows = await sql`DELETE FROM portal_sessions WHERE user_id = ${userId}::bigint RETURNING 1`;
      return rows.length;
    },
    async cleanUp() {
      const sessions = await sql`
        DELETE FROM portal_sessions
        WHERE expires_at < now() OR last_seen_at < now() - ${SESSION_IDLE_MS}::float8 * interval '1 millisecond'`;
      const links = await sql`DELETE FROM portal_sign_in_links WHERE expires_at < now() - interval '1 day'`;
      const requests = await sql`DELETE FROM portal_sign_in_requests WHERE at < now() - interval '1 day'`;
      return { sessions: sessions.count, links: links.count, requests: requests.count };
    },
  };
}
