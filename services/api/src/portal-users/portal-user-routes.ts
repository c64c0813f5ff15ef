// PUT/GET/DELETE /partner/v1/portal-users: the people who may sign in to the partner portal (portal-users.ts).
// Thin: parse, check the key's permission, call the repository, shape the answer.
import { Elysia } from "elysia";
import {
  ErrorMessages,
  ErrorResponse,
  PortalUserBody,
  PortalUserDeleted,
  PortalUserErrorMessages,
  PortalUserList,
  PortalUserPutResponse,
} from "@pss/contracts";
import { documented, withExamples } from "../docs/openapi.ts";
import {
  ApiError,
  BadRequestError,
  ConflictError,
  NotFoundError,
  UnauthorizedError,
  type Principal,
} from "@pss/http-kit";
import type { PartnerContext } from "../partner/partner-context.ts";
import {
  deletePortalUser,
  isPortalEmail,
  listPortalUsers,
  normalizeEmail,
  PortalUserLimitError,
  putPortalUser,
} from "./portal-users.ts";
import { PORTAL_USER_DOCS, PORTAL_USER_EXAMPLES } from "./portal-user-docs.ts";

class LiveKeyOnlyError extends ApiError {
  constructor() {
    super(403, PortalUserErrorMessages.liveKeyOnly);
  }
}

function liveKey(partner: Principal): Principal {
  if (partner.mode !== "live") throw new LiveKeyOnlyError();
  return partner;
}

function emailOf(raw: string | null | undefined): string {
  if (typeof raw !== "string" || raw.includes("\uFFFD")) throw new BadRequestError(PortalUserErrorMessages.badEmail);
  const email = normalizeEmail(raw);
  if (!isPortalEmail(email)) throw new BadRequestError(PortalUserErrorMessages.badEmail);
  return email;
}

const common = { 401: ErrorMessages.unauthorized, 403: PortalUserErrorMessages.liveKeyOnly };

export function createPortalUserRoutes(ctx: PartnerContext) {
  const { sql } = ctx.deps;
  return new Elysia({ name: "portal-user-routes" })
    .use(ctx.auth)
    .put(
      "/portal-users/:email",
      async ({ params, body, set, partner }) => {
        const key = liveKey(partner);
        const email = emailOf(params.email);
        // Granting lead access is a key's lead-tracking permission passed on: the lead-count routes' 401 without it.
        if (body.leadAccess === true && !key.leadTracking) throw new UnauthorizedError();
        try {
          const { created, user } = await putPortalUser(sql, {
            partnerId: key.partnerId,
            email,
            leadAccess: body.leadAccess ?? false,
            byKeyId: key.keyId,
          });
          set.status = created ? 201 : 200;
          return {
            status: "success" as const,
            message: created ? ("Portal user invited" as const) : ("Portal user updated" as const),
            portalUser: user,
          };
        } catch (err) {
          if (err instanceof PortalUserLimitError) throw new ConflictError(PortalUserErrorMessages.tooMany);
          throw err;
        }
      },
      {
        body: PortalUserBody,
        response: {
          200: PortalUserPutResponse,
          201: PortalUserPutResponse,
          400: ErrorResponse,
          401: ErrorResponse,
          403: ErrorResponse,
          409: ErrorResponse,
        },
        detail: {
          summary: "Invite a person to the partner portal, or change whether they see lead figures",
          description: PORTAL_USER_DOCS["PUT /portal-users/:email"],
          ...withExamples(PORTAL_USER_EXAMPLES["PUT /portal-users/:email"]),
          responses: documented({
            200: { description: "Updated", schema: PortalUserPutResponse },
            201: { description: "Invited: the portal e-mails them an invitation", schema: PortalUserPutResponse },
            400: PortalUserErrorMessages.badEmail,
            401: "Missing, malformed, unknown or revoked key; or leadAccess: true from a key without lead-tracking permission",
            403: PortalUserErrorMessages.liveKeyOnly,
            409: PortalUserErrorMessages.tooMany,
          }),
        },
      },
    )
    .get(
      "/portal-users",
      async ({ partner }) => ({
        status: "success" as const,
        portalUsers: await listPortalUsers(sql, liveKey(partner).partnerId),
      }),
      {
        response: { 200: PortalUserList },
        detail: {
          summary: "List the partner's portal users",
          description: PORTAL_USER_DOCS["GET /portal-users"],
          ...withExamples(PORTAL_USER_EXAMPLES["GET /portal-users"]),
          responses: documented({ 200: { description: "Every portal user", schema: PortalUserList }, ...common }),
        },
      },
    )
    .delete(
      "/portal-users/:email",
      async ({ params, partner }) => {
        const key = liveKey(partner);
        if (!(await deletePortalUser(sql, key.partnerId, emailOf(params.email))))
          throw new NotFoundError(PortalUserErrorMessages.notFound);
        return { status: "success" as const, message: "Portal user removed" as const };
      },
      {
        response: { 200: PortalUserDeleted },
        detail: {
          summary: "Remove a person's access to the partner portal (signed out everywhere at once)",
          description: PORTAL_USER_DOCS["DELETE /portal-users/:email"],
          ...withExamples(PORTAL_USER_EXAMPLES["DELETE /portal-users/:email"]),
          responses: documented({
            200: { description: "Removed", schema: PortalUserDeleted },
            400: PortalUserErrorMessages.badEmail,
            ...common,
            404: PortalUserErrorMessages.notFound,
          }),
        },
      },
    );
}
