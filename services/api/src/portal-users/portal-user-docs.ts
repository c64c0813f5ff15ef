// The OpenAPI prose of the portal-user routes (portal-user-routes.ts).
import { MAX_PORTAL_USERS, PortalUserErrorMessages } from "@pss/contracts";

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

const PORTAL_USER = {
  email: "dana@acme-brokers.example",
  leadAccess: true,
  invitation: "pending",
  createdAt: "2025-03-04T09:15:00.000Z",
  updatedAt: "2025-03-04T09:15:00.000Z",
  lastSignInAt: null,
};
const LIVE_KEY_ONLY = { summary: "A test key", value: { status: "error", error: PortalUserErrorMessages.liveKeyOnly } };
const BAD_EMAIL = {
  summary: "Not an e-mail address",
  value: { status: "error", error: PortalUserErrorMessages.badEmail },
};

/** Each route's examples (docs/openapi.ts, OperationExamples), by method and path. All need a live key. */
export const PORTAL_USER_EXAMPLES = {
  "PUT /portal-users/:email": {
    request: {
      summary: "Invite Dana, who will see lead figures (a key with lead tracking)",
      params: { email: "dana@acme-brokers.example" },
      body: { leadAccess: true },
    },
    responses: {
      201: {
        summary: "Invited: the portal e-mails Dana an invitation",
        value: { status: "success", message: "Portal user invited", portalUser: PORTAL_USER },
      },
      200: {
        summary: "Dana was invited before: what she may see is replaced",
        value: {
          status: "success",
          message: "Portal user updated",
          portalUser: {
            ...PORTAL_USER,
            invitation: "sent",
            updatedAt: "2025-03-05T11:02:00.000Z",
            lastSignInAt: "2025-03-04T09:21:40.000Z",
          },
        },
      },
      400: BAD_EMAIL,
      403: LIVE_KEY_ONLY,
      409: {
        summary: "The partner has the most portal users already",
        value: { status: "error", error: PortalUserErrorMessages.tooMany },
      },
    },
  },
  "GET /portal-users": {
    request: { summary: "Everyone who may sign in to the portal" },
    responses: {
      200: {
        summary: "One portal user, who has signed in",
        value: {
          status: "success",
          portalUsers: [{ ...PORTAL_USER, invitation: "sent", lastSignInAt: "2025-03-04T09:21:40.000Z" }],
        },
      },
      403: LIVE_KEY_ONLY,
    },
  },
  "DELETE /portal-users/:email": {
    request: { summary: "Remove Dana's access", params: { email: "dana@acme-brokers.example" } },
    responses: {
      200: {
        summary: "Removed, and signed out everywhere",
        value: { status: "success", message: "Portal user removed" },
      },
      404: {
        summary: "Nobody with that address",
        value: { status: "error", error: PortalUserErrorMessages.notFound },
      },
      403: LIVE_KEY_ONLY,
    },
  },
} as const;
