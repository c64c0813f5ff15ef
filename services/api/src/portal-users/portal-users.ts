// The partner portal's users (issue 42; docs/portal.md): who may sign in to a partner's portal and whether they see
// lead figures. Written by the partner's PUT/DELETE /partner/v1/portal-users/{email} (portal-user-routes.ts) and by
// the operators' `admin portal-users` (published as @pss/api/portal-users); the portal reads them and sends the
// invitation e-mail (its columns). Receives its client: no environment, no connection of its own.
import { isEmail, MAX_PORTAL_USERS, type PortalUser } from "@pss/contracts";
import { isoTimestamp } from "@pss/database/queries";
import type postgres from "postgres";
import { AdminError } from "../admin/partner-admin.ts";

/** Addresses are compared and stored lower-cased: Jane@Example.com and jane@example.com are one person. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export const isPortalEmail = (email: string) => email.length <= 254 && isEmail(email);

export class PortalUserLimitError extends Error {
  constructor() {
    super(`A partner has at most ${MAX_PORTAL_USERS} portal users`);
  }
}

export interface PortalUserWrite {
  partnerId: string;
  /** Lower-cased by the caller (normalizeEmail). */
  email: string;
  leadAccess: boolean;
  /** The API key that made the change; null for an operator. */
  byKeyId: string | null;
}

function columns(sql: postgres.Sql) {
  return sql`email, lead_access, invitation_state, ${isoTimestamp(sql, "created_at")} AS created_at,
    ${isoTimestamp(sql, "updated_at")} AS updated_at, ${isoTimestamp(sql, "last_sign_in_at")} AS last_sign_in_at`;
}

function toPortalUser(row: postgres.Row | undefined): PortalUser {
  if (!row) throw new Error("the portal user's row was not returned");
  return {
    email: row.email,
    leadAccess: row.lead_access,
    invitation: row.invitation_state,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastSignInAt: row.last_sign_in_at ?? null,
  };
}

/**
 * Invites the person (created: true; the portal sends the invitation e-mail) or replaces what they may see. A failed
 * invitation is queued again. Under the partner's row lock, so the limit holds with concurrent invitations.
 */
export async function putPortalUser(
  sql: postgres.Sql,
  write: PortalUserWrite,
): Promise<{ created: boolean; user: PortalUser }> {
  return sql.begin(async (tx) => {
    const [partner] = await tx`SELECT id FROM partners WHERE id = ${write.partnerId}::uuid FOR UPDATE`;
    if (!partner) throw new AdminError("not_found", `partner ${write.partnerId} not found`);
    const [existing] = await tx`
      SELECT id FROM portal_users WHERE partner_id = ${write.partnerId}::uuid AND email = ${write.email}`;
    if (!existing) {
      const [{ n }] = (await tx`
        SELECT count(*)::int AS n FROM portal_users WHERE partner_id = ${write.partnerId}::uuid`) as unknown as [
        { n: number },
      ];
      if (n >= MAX_PORTAL_USERS) throw new PortalUserLimitError();
      const [row] = await tx`
        INSERT INTO portal_users (partner_id, email, lead_access, changed_by_key_id)
        VALUES (${write.partnerId}::uuid, ${write.email}, ${write.leadAccess}, ${write.byKeyId}::bigint)
        RETURNING ${columns(tx as unknown as postgres.Sql)}`;
      return { created: true, user: toPortalUser(row) };
    }
    const [row] = await tx`
      UPDATE portal_users SET
        lead_access = ${write.leadAccess},
        changed_by_key_id = ${write.byKeyId}::bigint,
        updated_at = CASE WHEN lead_access IS DISTINCT FROM ${write.leadAccess} OR invitation_state = 'failed' THEN now() ELSE updated_at END,
        invitation_state = CASE WHEN invitation_state = 'failed' THEN 'pending' ELSE invitation_state END,
        invitation_attempts = CASE WHEN invitation_state = 'failed' THEN 0 ELSE invitation_attempts END,
        invitation_due_at = CASE WHEN invitation_state = 'failed' THEN now() ELSE invitation_due_at END
      WHERE id = ${existing.id}
      RETURNING ${columns(tx as unknown as postgres.Sql)}`;
    return { created: false, user: toPortalUser(row) };
  });
}

export async function listPortalUsers(sql: postgres.Sql, partnerId: string): Promise<PortalUser[]> {
  const rows = await sql`
    SELECT ${columns(sql)} FROM portal_users WHERE partner_id = ${partnerId}::uuid ORDER BY email LIMIT ${MAX_PORTAL_USERS}`;
  return rows.map(toPortalUser);
}

/** Removes the person's access; their sessions and sign-in links go with them (ON DELETE CASCADE). */
export async function deletePortalUser(sql: postgres.Sql, partnerId: string, email: string): Promise<boolean> {
  const rows =
    await sql`DELETE FROM portal_users WHERE partner_id = ${partnerId}::uuid AND email = ${email} RETURNING id`;
  return rows.length > 0;
}

/** The operators' `admin portal-users` (services/admin): the same writes, with an operator's checks and words. */
export function createPortalUserAdmin(sql: postgres.Sql) {
  const emailOf = (raw: string) => {
    const email = normalizeEmail(raw);
    if (!isPortalEmail(email))
      throw new AdminError("invalid_argument", `--email must be an e-mail address, got '${raw}'`);
    return email;
  };
  const partnerExists = async (partnerId: string) => {
    const [row] = await sql`SELECT 1 FROM partners WHERE id = ${partnerId}::uuid`;
    if (!row) throw new AdminError("not_found", `partner ${partnerId} not found`);
  };
  return {
    async invite(args: { partnerId: string; email: string; leadAccess: boolean }) {
      try {
        const { created, user } = await putPortalUser(sql, {
          partnerId: args.partnerId,
          email: emailOf(args.email),
          leadAccess: args.leadAccess,
          byKeyId: null,
        });
        return { partnerId: args.partnerId, invited: created, portalUser: user };
      } catch (err) {
        if (err instanceof PortalUserLimitError) throw new AdminError("invalid_argument", err.message);
        throw err;
      }
    },
    async list(partnerId: string) {
      await partnerExists(partnerId);
      return { partnerId, portalUsers: await listPortalUsers(sql, partnerId) };
    },
    async remove(args: { partnerId: string; email: string }) {
      const email = emailOf(args.email);
      await partnerExists(args.partnerId);
      if (!(await deletePortalUser(sql, args.partnerId, email)))
        throw new AdminError("not_found", `no portal user ${email} for partner ${args.partnerId}`);
      return { partnerId: args.partnerId, removed: email };
    },
  };
}
