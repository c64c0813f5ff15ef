// Sign-in by a one-time e-mail link (docs/portal.md, "Signing in"). Asking for a link answers the same whether the
// address is invited or not, in the same time: the request is counted (per client address and per e-mail, known or
// not) and answered; looking the address up, making the links and sending the e-mail happen after the answer. A
// link works once, for 15 minutes, and only in the browser that asked for it (its cookie's hash is stored with the
// link): a link forwarded, intercepted or opened by a mail scanner signs nobody in.
import type { Logger } from "@pss/service-kit";
import type postgres from "postgres";
import type { PortalMailer } from "./mailer.ts";
import type { Sessions } from "./sessions.ts";
import { isTokenText, newToken, sha256 } from "./tokens.ts";

export const LINK_TTL_MS = 15 * 60_000;
const WINDOW_MS = 3600_000;

export type LinkRefusal = "unknown" | "used" | "expired" | "other-browser";
export type LinkOutcome = { sessionToken: string; userId: string } | { refused: LinkRefusal };

export interface SignInDeps {
  sql: postgres.Sql;
  sessions: Sessions;
  mailer: PortalMailer;
  /** The portal's public address, ending in /portal. */
  portalUrl: string;
  /** Requests per hour; 0 turns a limit off. */
  limits: { perAddress: number; perEmail: number };
  logger: Logger;
}

export function createSignIn(deps: SignInDeps) {
  const log = deps.logger.child({ component: "sign-in" });
  /** Sends still running (tests and shutdown wait for them). */
  const sending = new Set<Promise<void>>();

  /** Seconds until the oldest counted request leaves the hour, or null while under the limit. */
  async function limited(column: "address_hash" | "email_hash", hash: Buffer, limit: number): Promise<number | null> {
    if (limit <= 0) return null;
    const [row] = await deps.sql`
      SELECT count(*)::int AS n, extract(epoch from min(at))::float8 * 1000 AS oldest FROM portal_sign_in_requests
      WHERE ${deps.sql(column)} = ${hash} AND at > now() - ${WINDOW_MS}::float8 * interval '1 millisecond'`;
    if (!row || row.n < limit) return null;
    return Math.max(1, Math.ceil((row.oldest + WINDOW_MS - Date.now()) / 1000));
  }

  /** Makes a link for each partner that invited the address and e-mails them together. */
  async function deliver(email: string, browserHash: Buffer): Promise<void> {
    const users = await deps.sql<{ id: string; partner_name: string }[]>`
      SELECT u.id::text AS id, p.name AS partner_name FROM portal_users u JOIN partners p ON p.id = u.partner_id
      WHERE u.email = ${email} ORDER BY p.name, u.id`;
    if (users.length === 0) return;
    const links: { partner: string; url: string }[] = [];
    for (const user of users) {
      const token = newToken();
      await deps.sql`
        INSERT INTO portal_sign_in_links (token_hash, user_id, browser_hash, expires_at)
        VALUES (${sha256(token)}, ${user.id}::bigint, ${browserHash}, now() + ${LINK_TTL_MS}::float8 * interval '1 millisecond')`;
      links.push({ partner: user.partner_name, url: `${deps.portalUrl}/sign-in/${token}` });
    }
    const [only] = links;
    const paragraphs =
      links.length === 1 && only
        ? [`Open this link to sign in to ${only.partner}'s partner portal:`, only.url]
        : [
            "Your address may sign in to the partner portals of several partners. Open the link of the one you want:",
            ...links.flatMap((l) => [`${l.partner}:`, l.url]),
          ];
    await deps.mailer.send({
      to: email,
      subject: "Your sign-in link to the partner portal",
      paragraphs: [
        ...paragraphs,
        "The link works once, for 15 minutes, and only in the browser where you asked for it. If you did not ask for it, ignore this e-mail: nobody can sign in with it but you.",
      ],
      id: `portal-sign-in-${newToken().slice(0, 16)}`,
    });
  }

  return {
    /**
     * Counts the request and answers; the e-mail (if the address was invited) is sent after. `browserToken` is the
     * asking browser's cookie. Limited: the seconds to wait.
     */
    async requestLink(args: {
      email: string;
      addressBucket: string;
      browserToken: string;
    }): Promise<{ accepted: true } | { retryAfterSeconds: number }> {
      const addressHash = sha256(`address:${args.addressBucket}`);
      const emailHash = sha256(`email:${args.email}`);
      const wait =
        (await limited("address_hash", addressHash, deps.limits.perAddress)) ??
        (await limited("email_hash", emailHash, deps.limits.perEmail));
      if (wait !== null) return { retryAfterSeconds: wait };
      await deps.sql`INSERT INTO portal_sign_in_requests (address_hash, email_hash) VALUES (${addressHash}, ${emailHash})`;
      const work = deliver(args.email, sha256(args.browserToken)).catch((err: Error) =>
        log.warn("sending a sign-in link failed; the person can ask again", { err: err.message }),
      );
      sending.add(work);
      void work.finally(() => sending.delete(work));
      return { accepted: true };
    },

    /** Uses a link: a new session for its user, or why not. A link opened in another browser stays usable. */
    async useLink(token: string, browserToken: string | undefined): Promise<LinkOutcome> {
      if (!isTokenText(token)) return { refused: "unknown" };
      return deps.sql.begin(async (tx) => {
        const [link] = await tx`
          SELECT user_id::text AS user_id, browser_hash, used_at, expires_at < now() AS expired
          FROM portal_sign_in_links WHERE token_hash = ${sha256(token)} FOR UPDATE`;
        if (!link) return { refused: "unknown" as const };
        if (link.used_at !== null) return { refused: "used" as const };
        if (link.expired) return { refused: "expired" as const };
        if (!isTokenText(browserToken) || !sha256(browserToken).equals(link.browser_hash))
          return { refused: "other-browser" as const };
        await tx`UPDATE portal_sign_in_links SET used_at = now() WHERE token_hash = ${sha256(token)}`;
        await tx`UPDATE portal_users SET last_sign_in_at = now() WHERE id = ${link.user_id}::bigint`;
        const sessionToken = await deps.sessions.create(tx, link.user_id);
        return { sessionToken, userId: link.user_id as string };
      });
    },

    /** Waits for the e-mails being sent (shutdown, tests). */
    async settle(): Promise<void> {
      await Promise.all([...sending]);
    },
  };
}

export type SignIn = ReturnType<typeof createSignIn>;
