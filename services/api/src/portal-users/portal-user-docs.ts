// The OpenAPI prose of the portal-user routes (portal-user-routes.ts).
import { MAX_PORTAL_USERS } from "@pss/contracts";

export const PORTAL_USER_DOCS = {
  "PUT /portal-users/:email":
    "Invites a person to the partner's portal (201; the portal e-mails them an invitation once) or replaces what " +
    "they may see (200; an identical repeat changes nothing). People sign in with a one-time link sent to this " +
    'address (the partner guide, "The partner portal"); they see the partner\'s live and test records, ' +
    "webhooks and API requests. leadAccess: true needs a key with lead-tracking permission (401 otherwise, as the " +
    "lead-count routes answer); any live key may set it to false. Only live keys (pss_live_…) manage portal users " +
    `(403 for a test key). A partner has at most ${MAX_PORTAL_USERS} portal users (409). The address is ` +
    "compared lower-cased. A PUT for a person whose invitation could not be sent queues it again.",
  "GET /portal-users": `Every portal user of the partner (at most ${MAX_PORTAL_USERS}), by e-mail address.`,
  "DELETE /portal-users/:email":
    "Removes the person's access at once: their sessions end on every browser and unused sign-in links stop working.",
} as const;
