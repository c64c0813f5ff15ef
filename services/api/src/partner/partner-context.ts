// What partner routes share: their dependencies, the caller (the `partner` the auth plugin derives) and
// per-request helpers.
import { EXTERNAL_ID_RULE, ErrorMessages, isValidExternalId } from "@pss/contracts";
import { Elysia } from "elysia";
import type postgres from "postgres";
import type { Authenticator, Principal } from "../auth/authenticator.ts";
import { ApiError, BadRequestError, RateLimitedError, UnauthorizedError } from "../http/errors.ts";
import type { RequestTrace, RequestTraces } from "../http/request-trace.ts";
import { annotateRequest, type Logger } from "@pss/service-kit";
import { idempotentPosts, keyScope, type IdempotencyLayer } from "../http/idempotency.ts";
import type { RateLimiter } from "../http/rate-limiter.ts";
import type { PreviewLinks } from "../previews/preview-links.ts";
import type { ListingWriteGroups } from "../listings/listing-write-groups.ts";
import type { RecordScope, WriteOrigin } from "../records/record-scope.ts";

export interface PartnerDeps {
  sql: postgres.Sql;
  publicBaseUrl: string;
  /** Signed links to the previews of test records (their serviceListingUrl and serviceProfileUrl). */
  previews: PreviewLinks;
  /** The partner rate limiter the route guard charges one unit per request; a batch charges its other items here. */
  rateLimiter?: RateLimiter;
  /** Idempotency-Key on POSTs (http/idempotency.ts); `sql` above is its transaction-aware pool. */
  idempotency: IdempotencyLayer;
  /** Single listing PUTs, written together while others are being written (group commit: listing-write-groups.ts). */
  listingWrites: ListingWriteGroups;
}

/** A live key on a test-mode-only route. */
export class TestModeOnlyError extends ApiError {
  constructor() {
    super(403, ErrorMessages.testModeOnly);
  }
}

/**
 * The partner routes' guard, as a plugin that derives `partner`: the caller, whose partner and mode (live or test)
 * scope every read and write. A valid key (exactly "Bearer <key>"; the same 401 whatever was wrong), then the rate
 * limit. It runs at the transform stage, so 401 and 429 come before any body or schema problem. Route plugins
 * `.use()` it for the `partner` in their handlers' context; Elysia registers a named plugin once per app, so the
 * guard runs once per request, where app.ts puts it.
 */
export function createPartnerAuth(deps: { authenticator: Authenticator; rateLimiter: RateLimiter }) {
  return new Elysia({ name: "partner-auth" }).derive({ as: "scoped" }, async (context) => {
    const header = context.request.headers.get("authorization");
    const key = header?.startsWith("Bearer ") ? header.slice(7) : null;
    const principal = key ? await deps.authenticator.authenticate(key) : null;
    if (!principal) throw new UnauthorizedError();
    // Known before the rate limit answers: the request log line of a 429 names the partner too (principalIn), and
    // so does its span (searchable by partner in the trace store).
    Object.assign(context, { partner: principal });
    annotateRequest({ "pss.partner_id": principal.partnerId, "pss.mode": principal.mode });
    const retryAfter = await deps.rateLimiter.check(principal.keyId);
    if (retryAfter !== null) throw new RateLimitedError(retryAfter);
    return { partner: principal };
  });
}

export type PartnerAuth = ReturnType<typeof createPartnerAuth>;

/** The caller a request authenticated as, read from any hook's context (the request log); none before the guard. */
export function principalIn(context: object): Principal | undefined {
  return (context as { partner?: Principal }).partner;
}

export interface PartnerContext {
  deps: PartnerDeps;
  /** The guard every partner route plugin uses: it puts `partner` in the handlers' context. */
  auth: PartnerAuth;
  /** Who makes a change (key and request ID), for the change history. */
  originOf(partner: Principal, request: Request): WriteOrigin;
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
  testPrincipalOf(partner: Principal): Principal;
  /** The request's logger (carries its request ID). */
  loggerOf(request: Request): Logger;
  /**
   * Rate limiting counted per item: the guard counted the request as its first item; this counts the other
   * `items - 1`. How many items (from the first) may go ahead, and Retry-After for the rest.
   */
  chargeItems(partner: Principal, items: number): Promise<{ granted: number; retryAfter: number | null }>;
  /**
   * Makes every POST route registered on a route plugin after this call honour Idempotency-Key, per API key: the
   * same key again gets the first answer and has no second effect (http/idempotency.ts). `sealedPaths`: routes
   * whose answer holds a secret (kept encrypted).
   */
  idempotentPosts<App extends object>(app: App, opts?: { sealedPaths?: readonly string[] }): App;
}

export function createPartnerContext(
  deps: PartnerDeps,
  auth: PartnerAuth,
  traces: Pick<RequestTraces, "of" | "logger">,
): PartnerContext {
  return {
    deps,
    auth,
    traceOf: (request) => traces.of(request),
    originOf(partner, request) {
      return { keyId: partner.keyId, requestId: traces.of(request).requestId };
    },
    externalId(raw, name) {
      // The router gives null for a broken percent-escape (older versions: U+FFFD); accepting that would merge
      // different IDs into one.
      if (typeof raw !== "string" || raw.includes("\uFFFD"))
        throw new BadRequestError(`${name} is not valid percent-encoded UTF-8`);
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
    async chargeItems(partner, items) {
      const extra = items - 1;
      const take = deps.rateLimiter?.take;
      if (extra <= 0 || !take) return { granted: items, retryAfter: null };
      const { granted, retryAfter } = await take.call(deps.rateLimiter, partner.keyId, extra);
      return { granted: granted + 1, retryAfter };
    },
    idempotentPosts: (app, opts) =>
      idempotentPosts(
        app,
        deps.idempotency,
        (c) => keyScope.apiKey((c as unknown as { partner: Principal }).partner.keyId),
        opts,
      ),
    testPrincipalOf(partner) {
      if (partner.mode !== "test") throw new TestModeOnlyError();
      return partner;
    },
  };
}
