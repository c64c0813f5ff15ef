// What partner routes share: their dependencies and per-request helpers.
import { EXTERNAL_ID_RULE, ErrorMessages, isValidExternalId } from "@pss/contracts";
import type postgres from "postgres";
import type { Principal } from "../auth/authenticator.ts";
import { ApiError, BadRequestError, UnauthorizedError } from "../http/errors.ts";
import type { RequestTrace, RequestTraces } from "../http/request-trace.ts";
import type { Logger } from "@pss/service-kit";
import type { RateLimiter } from "../http/rate-limiter.ts";
import type { PreviewLinks } from "../previews/preview-links.ts";
import type { RecordScope, WriteOrigin } from "../records/record-scope.ts";

export interface PartnerDeps {
  sql: postgres.Sql;
  publicBaseUrl: string;
  /** Signed links to the previews of test records (their serviceListingUrl and serviceProfileUrl). */
  previews: PreviewLinks;
  /** The partner rate limiter the route guard charges one unit per request; a batch charges its other items here. */
  rateLimiter?: RateLimiter;
}

/** A live key on a test-mode-only route. */
export class TestModeOnlyError extends ApiError {
  constructor() {
    super(403, ErrorMessages.testModeOnly);
  }
}

export interface PartnerContext {
  deps: PartnerDeps;
  /** The caller, whose partner and mode (live or test) scope every read and write. */
  principalOf(request: Request): Principal;
  /** Who makes a change (key and request ID), for the change history. */
  originOf(request: Request): WriteOrigin;
  /** The request's ID and traceparent: writes put them on their outbox rows. */
  traceOf(request: Request): RequestTrace;
  /** Path parameter as an external ID, or 400 explaining the rule. */
  externalId(raw: string | null | undefined, name: string): string;
  /** ?dryRun=true|false on a PUT (absent: false), or 400. Read from the URL: a repeated parameter is refused, not merged. */
  dryRun(request: Request): boolean;
  /** The listing's public URL, or for a test record a signed, short-lived preview link. */
  listingUrl(scope: RecordScope, serviceListingId: number): Promise<string>;
  /** The broker's public profile URL, or for a test record a signed, short-lived preview link. */
  brokerUrl(scope: RecordScope, serviceBrokerId: string): Promise<string>;
  /** The caller, who must hold a test key (403 otherwise). */
  testPrincipalOf(request: Request): Principal;
  /** The request's logger (carries its request ID). */
  loggerOf(request: Request): Logger;
  /**
   * Rate limiting counted per item: the guard counted the request as its first item; this counts the other
   * `items - 1`. How many items (from the first) may go ahead, and Retry-After for the rest.
   */
  chargeItems(request: Request, items: number): Promise<{ granted: number; retryAfter: number | null }>;
}

export function createPartnerContext(deps: PartnerDeps, principals: WeakMap<Request, Principal>, traces: Pick<RequestTraces, "of" | "logger">): PartnerContext {
  const principalOf = (request: Request) => {
    const principal = principals.get(request);
    if (!principal) throw new UnauthorizedError();
    return principal;
  };
  return {
    deps,
    principalOf,
    traceOf: (request) => traces.of(request),
    originOf(request) {
      return { keyId: principalOf(request).keyId, requestId: traces.of(request).requestId };
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
    dryRun(request) {
      // Most writes have no query string: no URL to parse.
      if (!request.url.includes("?")) return false;
      const values = new URL(request.url).searchParams.getAll("dryRun");
      if (values.length === 0 || (values.length === 1 && values[0] === "false")) return false;
      if (values.length === 1 && values[0] === "true") return true;
      throw new BadRequestError("Invalid query parameters: dryRun must be true or false");
    },
    async listingUrl(scope, id) {
      return scope.mode === "test" ? deps.previews.listingUrl(id) : `${deps.publicBaseUrl}/listings/${id}`;
    },
    async brokerUrl(scope, id) {
      return scope.mode === "test" ? deps.previews.brokerUrl(id) : `${deps.publicBaseUrl}/brokers/${id}`;
    },
    loggerOf: (request) => traces.logger(request),
    async chargeItems(request, items) {
      const extra = items - 1;
      const take = deps.rateLimiter?.take;
      if (extra <= 0 || !take) return { granted: items, retryAfter: null };
      const { granted, retryAfter } = await take.call(deps.rateLimiter, principalOf(request).keyId, extra);
      return { granted: granted + 1, retryAfter };
    },
    testPrincipalOf(request) {
      const principal = principalOf(request);
      if (principal.mode !== "test") throw new TestModeOnlyError();
      return principal;
    },
  };
}
