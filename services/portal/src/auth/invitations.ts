// The invitation e-mail (docs/portal.md, "Inviting people"): a person invited through the API or the admin CLI is
// e-mailed once, by whichever portal instance claims the row first (FOR UPDATE SKIP LOCKED: two instances never
// send one invitation twice). A relay that refuses is tried again with a growing delay; after MAX_ATTEMPTS the
// invitation is `failed` (a PUT of the user queues it again) and the person can still ask for a sign-in link.
import { createPeriodicJob, type Logger } from "@pss/service-kit";
import type postgres from "postgres";
import type { PortalMailer } from "./mailer.ts";

export const MAX_INVITATION_ATTEMPTS = 6;
const RETRY_BASE_MS = 30_000;

export function createInvitationSender(deps: {
  sql: postgres.Sql;
  mailer: PortalMailer;
  portalUrl: string;
  logger: Logger;
  intervalMs?: number;
}) {
  const log = deps.logger.child({ component: "invitations" });

  /** Sends one due invitation; true when one was handled (more may wait). */
  async function sendOne(): Promise<boolean> {
    return deps.sql.begin(async (tx) => {
      const [row] = await tx`
        SELECT u.id::text AS id, u.email, u.invitation_attempts, p.name AS partner_name
        FROM portal_users u JOIN partners p ON p.id = u.partner_id
        WHERE u.invitation_state = 'pending' AND u.invitation_due_at <= now()
        ORDER BY u.invitation_due_at LIMIT 1 FOR UPDATE OF u SKIP LOCKED`;
      if (!row) return false;
      try {
        await deps.mailer.send({
          to: row.email,
          subject: `${row.partner_name} invited you to its partner portal`,
          paragraphs: [
            `${row.partner_name} invited you to its partner portal: every listing, webhook delivery and API request of its integration, in your browser.`,
            "To sign in, open the portal and ask for a sign-in link for this address:",
            `${deps.portalUrl}/sign-in?email=${encodeURIComponent(row.email)}`,
          ],
          id: `portal-invitation-${row.id}-${row.invitation_attempts + 1}`,
        });
        await tx`
          UPDATE portal_users SET invitation_state = 'sent', invitation_sent_at = now(), invitation_due_at = NULL,
            invitation_attempts = invitation_attempts + 1
          WHERE id = ${row.id}::bigint`;
        log.info("invitation sent", { userId: row.id });
      } catch (err) {
        const attempts = row.invitation_attempts + 1;
        const failed = attempts >= MAX_INVITATION_ATTEMPTS;
        await tx`
          UPDATE portal_users SET invitation_attempts = ${attempts},
            invitation_state = ${failed ? "failed" : "pending"},
            invitation_due_at = ${failed ? null : new Date(Date.now() + RETRY_BASE_MS * 2 ** (attempts - 1))}
          WHERE id = ${row.id}::bigint`;
        log.warn(failed ? "invitation not sent; giving up" : "invitation not sent; trying again later", {
          userId: row.id,
          attempts,
          err: (err as Error).message,
        });
      }
      return true;
    });
  }

  return createPeriodicJob({
    name: "invitation sender",
    logger: log,
    tick: () => sendOne(),
    intervalMs: deps.intervalMs ?? 5_000,
    backoff: { initialMs: 1_000, maxMs: 30_000 },
    failureMessage: "sending invitations failed; trying again",
  });
}
