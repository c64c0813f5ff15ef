// Public lead intake: abuse limits, the honeypot, then one durable write. Never logs the buyer's details.
import { ErrorMessages, type LeadBody } from "@pss/contracts";
import type { EventTrace, Logger } from "@pss/service-kit";
import type postgres from "postgres";
import { BadRequestError, NotFoundError, RateLimitedError } from "../http/errors.ts";
import type { RateLimiter } from "../http/rate-limiter.ts";
import { addressBucket } from "./client-address.ts";
import { insertLead } from "./lead-repository.ts";

export interface LeadIntakeDeps {
  sql: postgres.Sql;
  logger: Logger;
  /** Per client address (IPv6 per /64); absent = unlimited. */
  addressLimiter?: RateLimiter;
  /** Per listing, so one listing's broker cannot be flooded; absent = unlimited. */
  listingLimiter?: RateLimiter;
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

  await enforce(deps.addressLimiter, addressBucket(input.clientAddress), log, { listingId, limit: "address" });
  const leadId = Bun.randomUUIDv7();
  if (body.website) {
    // A person never sees the field. Answer like a success so the bot learns nothing; store and send nothing.
    log.info("lead discarded: honeypot filled", { listingId });
    return { leadId };
  }
  await enforce(deps.listingLimiter, listingId, log, { listingId, limit: "listing" });

  const stored = await insertLead(
    deps.sql,
    { id: leadId, listingId, name, email: body.email, phone: body.phone?.trim() || null, message },
    input.trace,
  );
  if (!stored) throw new NotFoundError(ErrorMessages.listingNotFound);
  log.info("lead accepted", { leadId, listingId, officeId: stored.officeId });
  return { leadId };
}
