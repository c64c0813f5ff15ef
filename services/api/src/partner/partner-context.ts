// What partner routes share: their dependencies and per-request helpers.
import { EXTERNAL_ID_RULE, isValidExternalId } from "@pss/contracts";
import type postgres from "postgres";
import type { Principal } from "../auth/authenticator.ts";
import { BadRequestError, UnauthorizedError } from "../http/errors.ts";
import type { RequestTrace, RequestTraces } from "../http/request-trace.ts";

export interface PartnerDeps {
  sql: postgres.Sql;
  publicBaseUrl: string;
}

export interface PartnerContext {
  deps: PartnerDeps;
  principalOf(request: Request): Principal;
  /** The request's ID and traceparent: writes put them on their outbox rows. */
  traceOf(request: Request): RequestTrace;
  /** Path parameter as an external ID, or 400 explaining the rule. */
  externalId(raw: string | null | undefined, name: string): string;
}

export function createPartnerContext(deps: PartnerDeps, principals: WeakMap<Request, Principal>, traces: Pick<RequestTraces, "of">): PartnerContext {
  return {
    deps,
    traceOf: (request) => traces.of(request),
    principalOf(request) {
      const principal = principals.get(request);
      if (!principal) throw new UnauthorizedError();
      return principal;
    },
    externalId(raw, name) {
      // The router gives null for a broken percent-escape (older versions: U+FFFD); accepting that would merge
      // different IDs into one.
      if (typeof raw !== "string" || raw.includes("\uFFFD")) throw new BadRequestError(`${name} is not valid percent-encoded UTF-8`);
      // HTTP clients remove "." and ".." path segments, so such an ID could never be addressed.
      if (raw === "." || raw === "..") throw new BadRequestError(`${name} must not be "." or ".."`);
      if (!isValidExternalId(raw)) throw new BadRequestError(`${name} ${EXTERNAL_ID_RULE}`);
      return raw;
    },
  };
}
