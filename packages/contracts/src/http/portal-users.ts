// The partner portal's users as the partner API manages them (issue 42; docs/portal.md, docs/partner-guide.md
// "Portal users"): PUT /partner/v1/portal-users/{email} invites a person or changes what they may see,
// GET /partner/v1/portal-users lists them, DELETE removes one (and signs them out everywhere).
import { Type, type Static } from "@sinclair/typebox";
import { DateTime } from "./common.ts";

export const PortalUserBody = Type.Object(
  {
    leadAccess: Type.Optional(
      Type.Boolean({
        description:
          "Whether the person sees lead figures in the portal (inquiries per day, lead counts, lead.received deliveries), as a key with lead tracking does. Default false. Only a key with lead tracking may grant it (401 otherwise); any live key may take it away",
      }),
    ),
  },
  {
    additionalProperties: false,
    description: "A PUT replaces what the person may see: an omitted leadAccess is false",
  },
);
export type PortalUserBody = Static<typeof PortalUserBody>;

export const PortalUser = Type.Object(
  {
    email: Type.String({ description: "The person's e-mail address, lower-cased: what they sign in with" }),
    leadAccess: Type.Boolean(),
    invitation: Type.Union([Type.Literal("pending"), Type.Literal("sent"), Type.Literal("failed")], {
      description:
        "The invitation e-mail the portal sends once, when the person is first invited: pending (about to be sent), sent, or failed (the mail relay refused it; the person can still ask for a sign-in link on the portal's sign-in page)",
    }),
    createdAt: DateTime,
    updatedAt: DateTime,
    lastSignInAt: Type.Union([DateTime, Type.Null()], { description: "null until the person first signs in" }),
  },
  { additionalProperties: false },
);
export type PortalUser = Static<typeof PortalUser>;

export const PortalUserPutResponse = Type.Object(
  {
    status: Type.Literal("success"),
    message: Type.Union([Type.Literal("Portal user invited"), Type.Literal("Portal user updated")]),
    portalUser: PortalUser,
  },
  { additionalProperties: false },
);

export const PortalUserList = Type.Object(
  {
    status: Type.Literal("success"),
    portalUsers: Type.Array(PortalUser, { description: "Every portal user of the partner, by e-mail address" }),
  },
  { additionalProperties: false },
);

export const PortalUserDeleted = Type.Object(
  { status: Type.Literal("success"), message: Type.Literal("Portal user removed") },
  { additionalProperties: false },
);

/** Most portal users a partner may have: enough for any staff, bounded for the list. */
export const MAX_PORTAL_USERS = 500;

export const PortalUserErrorMessages = {
  notFound: "Portal user not found",
  liveKeyOnly:
    "Portal users are managed with a live key (pss_live_...): the portal shows live records, which a test key never touches",
  tooMany: `A partner has at most ${MAX_PORTAL_USERS} portal users: remove one first`,
  badEmail: "email must be an e-mail address of at most 254 characters",
} as const;
