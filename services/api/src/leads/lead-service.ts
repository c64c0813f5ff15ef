// Public lead intake: abuse limits, the honeypot, then one durable write. Never logs the buyer's details.
import { ErrorMessages, type LeadBody } from "@pss/contracts";
import type { EventTrace, Logger } from "@pss/service-kit";
import type postgres from "postgres";
import { BadRequestError, NotFoundError, RateLimitedError } from "../http/errors.ts";
import type { IdempotencyLayer } from "../http/idempotency.ts";
import type { RateLimiter } from "../http/rate-limiter.ts";
import { addressBucket, type TrustedProxies } from "./client-address.ts";
import { insertLead } from "./lead-repository.ts";

export interface LeadIntakeDeps {
  sql: postgres.Sql;
  logger: Logger;
  /** Per client address (IPv6 per /64), over all listings; absent = unlimited. */
  addressLimiter?: RateLimiter;
  /** Per listing and client address: one buyer's inquiries to one listing; absent = unlimited. */
  listingAddressLimiter?: RateLimiter;
  /**
   * Everyone's inquiries together, site-wide: the brake on a flood from many addresses. Never per listing: a count
   * per listing would tell a listing's owner, probing it from a few addresses, how many inquiries others sent.
   */
  globalLimiter?: RateLimiter;
  /** Whose X-Forwarded-For tells the client's address (TRUST_PROXY_CIDRS); absent: nobody's. */
  trustedProxies?: TrustedProxies;
  /** Idempotency-Key on the JSON route and the form's hidden key; absent: every POST is a new inquiry. */
  idempotency?: IdempotencyLayer;
}

export interface LeadSubmission {
  listingId: string;
  body: LeadBody;
  clientAddress: string | null;
  /** The request's ID and traceparent: stored with the lead's event, so its forwarding is logged with them. */
  trace?: EventTrace;
  /** The request's logger (lines carry its ID); default deps.logger. */
  log?: Logger;
}

async function enforce(
  limiter: RateLimiter | undefined,
  bucket: string,
  logger: Logger,
  fields: Record<string, unknown>,
): Promise<void> {
  const retryAfter = limiter ? await limiter.check(bucket) : null;
  if (retryAfter === null) return;
  logger.warn("lead refused: rate limit", fields);
  throw new RateLimitedError(retryAfter);
}

/** What the schema cannot say: name and message must hold more than spaces. */
export function blankLeadFields(
  body: Pick<LeadBody, "name" | "message">,
): { path: "name" | "message"; message: string }[] {
  return (["name", "message"] as const)
    .filter((f) => typeof body[f] === "string" && body[f].trim() === "")
    .map((path) => ({ path, message: "must not be blank" }));
}

export async function submitLead(deps: LeadIntakeDeps, input: LeadSubmission): Promise<{ leadId: string }> {
  const { body, listingId } = input;
  const log = input.log ?? deps.logger;
  const [blank] = blankLeadFields(body);
  if (blank) throw new BadRequestError(`${blank.path}: ${blank.message}`);
  const name = body.name.trim();
  const message = body.message.trim();

  const bucket = addressBucket(input.clientAddress);
  await enforce(deps.addressLimiter, bucket, log, { listingId, limit: "address" });
  const leadId = Bun.randomUUIDv7();
  if (body.website) {
    // A person never sees the field. Answer like a success so the bot learns nothing; store and send nothing.
    log.info("lead discarded: honeypot filled", { listingId });
    return { leadId };
  }
  // Only the prober's own requests move these two: what a 429 says depends on nobody else's inquiries to a listing.
  await enforce(deps.listingAddressLimiter, `${listingId}|${bucket}`, log, { listingId, limit: "listing-address" });
  await enforce(deps.globalLimiter, "all", log, { listingId, limit: "global" });

  const stored = await insertLead(
    deps.sql,
    { id: leadId, listingId, name, email: body.email, phone: body.phone?.trim() || null, message },
    input.trace,
  );
  if (!stored) throw new NotFoundError(ErrorMessages.listingNotFound);
  log.info("lead accepted", { leadId, listingId, officeId: stored.officeId });
  return { leadId };
}
