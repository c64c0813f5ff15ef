// Saved searches with e-mail alerts (docs/buyers-and-search.md, "Saved searches"): a buyer saves the current search
// with an address; nothing but a confirmation is sent until the link in it is followed (double opt-in); then a digest
// of the listings newly listed or reduced in price that match it, at most every `digestIntervalSeconds` and only
// when there is something; one-click unsubscribe in every message. No one can mail-bomb a stranger through the form:
// saves are limited per client address (its own answer, 429) and the e-mails per recipient (silently: the form
// answers the same whatever the address). The marketplace composes every e-mail; the leads service delivers them.
import { isEmail, type PublicListingSummary } from "@pss/contracts";
import { addressBucket, type RateLimiter } from "@pss/http-kit";
import type { Logger } from "@pss/service-kit";
import { maskEmail } from "@pss/service-kit";
import type postgres from "postgres";
import type { BuyerService } from "../buyers/buyer-service.ts";
import { bandLabel, searchQueryString } from "../buyers/pages/search-page.ts";
import { parseSearchPage, type SearchProblem, type SearchRequest } from "../buyers/search-params.ts";
import { confirmationMail, confirmUrl, digestMail, fullNoticeMail, unsubscribeUrl } from "./saved-search-mail.ts";
import {
  advanceDigest,
  confirmSearch,
  deleteUnconfirmed,
  emailKey,
  findByConfirmToken,
  findByUnsubscribeToken,
  forDueDigests,
  insertMail,
  saveSearch,
  unsubscribe,
  type SavedSearchRow,
} from "./saved-search-repository.ts";

export interface SavedSearchSettings {
  /** Saved searches one address may have (SAVED_SEARCHES_PER_ADDRESS). */
  maxPerAddress: number;
  /** Seconds between two digests of one search (SAVED_SEARCH_DIGEST_INTERVAL_SECONDS; a day). */
  digestIntervalSeconds: number;
  /** A confirmation link works this long; unconfirmed searches (and their addresses) are deleted after it. */
  confirmHours: number;
  /** Listings a digest names; the rest are counted, with the search's link. */
  digestSize: number;
  /**
   * A digest covers what went live or was reduced up to this many seconds ago (the next one goes on from there): the
   * search index takes a moment to show a change, which must not fall between two digests.
   */
  indexLagSeconds: number;
}

export const DEFAULT_SAVED_SEARCH_SETTINGS: SavedSearchSettings = {
  maxPerAddress: 10,
  digestIntervalSeconds: 86_400,
  confirmHours: 7 * 24,
  digestSize: 20,
  indexLagSeconds: 60,
};

export interface SavedSearchDeps {
  sql: postgres.Sql;
  logger: Logger;
  buyers: BuyerService;
  publicBaseUrl: string;
  settings: SavedSearchSettings;
  /** Saves per client address (IPv6: per /64); absent: unlimited. */
  addressLimiter?: RateLimiter;
  /** Confirmations and notices per recipient address; absent: unlimited. */
  recipientLimiter?: RateLimiter;
}

export type SaveAnswer =
  /** The same answer whatever happened to the address (saved, already saved, full, or its mail limit reached). */
  | { kind: "check-inbox" }
  | { kind: "invalid"; problems: SearchProblem[]; emailProblem: string | null }
  | { kind: "rate-limited"; retryAfterSeconds: number };

/** The search's filters as the URL has them (the form's fields, known and non-empty, in a fixed order). */
export function savedQuery(raw: Record<string, string>): { query: Record<string, string>; key: string } {
  const key = searchQueryString(raw, 1).replace(/^\?/, "");
  return { query: Object.fromEntries(new URLSearchParams(key)), key };
}

/** A saved search in words, for the e-mails: "bakery" · Bakery · in Austin, TX · within 25 mi of 78701 · … */
export function searchLabel(request: SearchRequest, query: Record<string, string>): string {
  const parts: string[] = [];
  if (request.q) parts.push(`“${request.q}”`);
  if (request.businessType) parts.push(request.businessType);
  const place = [request.city, request.state].filter(Boolean).join(", ");
  if (place) parts.push(`in ${place}`);
  if (request.near) parts.push(`within ${request.near.radius} ${request.near.unit} of ${request.near.place.label}`);
  if (request.minPrice !== null || request.maxPrice !== null)
    parts.push(
      `asking ${bandLabel({ from: request.minPrice ?? 0, below: request.maxPrice === null ? null : request.maxPrice + 0.01 }).toLowerCase()}`,
    );
  if (request.financingAvailable) parts.push("seller financing");
  if (request.sbaPrequalified) parts.push("SBA pre-qualified");
  if (request.realEstateIncluded) parts.push("real estate included");
  if (request.priceReduced) parts.push("price reduced");
  const rest = Object.keys(query).filter(
    (k) =>
      !["q", "businessType", "city", "state", "near", "radius", "radiusUnit", "minPrice", "maxPrice", "sort"].includes(
        k,
      ),
  ).length;
  const label = parts.length ? parts.join(" · ") : "All businesses for sale";
  return rest > 0 && parts.length === 0 ? `${label} (with filters)` : label;
}

export function createSavedSearches(deps: SavedSearchDeps) {
  const { sql, settings, publicBaseUrl: base } = deps;
  const log = deps.logger.child({ component: "saved-searches" });
  const intervalText = settings.digestIntervalSeconds >= 86_400 ? "a daily" : "an";
  const links = (query: Record<string, string>, unsubscribeToken: string) => ({
    searchUrl: `${base}/listings${searchQueryString(query, 1)}`,
    unsubscribeUrl: unsubscribeUrl(base, unsubscribeToken),
  });

  /** Whether another e-mail may go to this recipient now (never tells the form). */
  async function mayMail(email: string): Promise<boolean> {
    const retryAfter = deps.recipientLimiter
      ? await deps.recipientLimiter.check(new Bun.CryptoHasher("sha256").update(emailKey(email)).digest("hex"))
      : null;
    return retryAfter === null;
  }

  async function save(input: {
    email: string;
    raw: Record<string, string>;
    clientAddress: string | null;
  }): Promise<SaveAnswer> {
    const email = input.email.trim();
    const { request, problems } = parseSearchPage(input.raw, 1, deps.buyers.findPlace);
    const emailProblem =
      email === ""
        ? "Enter your e-mail address."
        : !isEmail(email)
          ? "Enter an e-mail address like name@example.com."
          : null;
    if (problems.length || emailProblem) return { kind: "invalid", problems, emailProblem };
    const retryAfter = deps.addressLimiter ? await deps.addressLimiter.check(addressBucket(input.clientAddress)) : null;
    if (retryAfter !== null) {
      log.warn("saved search refused: rate limit per client address");
      return { kind: "rate-limited", retryAfterSeconds: retryAfter };
    }
    const { query, key } = savedQuery(input.raw);
    const label = searchLabel(request, query);
    const outcome = await saveSearch(
      sql,
      { email, query, queryKey: key, label, maxPerAddress: settings.maxPerAddress },
      async (o, tx) => {
        if (o.kind === "exists") return;
        if (!(await mayMail(email))) {
          log.warn("saved search mail withheld: too many for this recipient", { to: maskEmail(email) });
          return;
        }
        if (o.kind === "pending")
          await insertMail(
            tx,
            o.savedSearchId,
            confirmationMail({
              to: email,
              label,
              confirm: confirmUrl(base, o.confirmToken),
              links: links(query, o.unsubscribeToken),
              intervalText,
            }),
          );
        else if (o.savedSearchId && o.unsubscribeToken)
          await insertMail(
            tx,
            o.savedSearchId,
            fullNoticeMail({ to: email, count: o.count, links: links(query, o.unsubscribeToken) }),
          );
      },
    );
    log.info("saved search requested", { outcome: outcome.kind, savedSearchId: outcome.savedSearchId });
    return { kind: "check-inbox" };
  }

  /** One digest: the matching listings listed or reduced after the last, newest first; nothing new, no e-mail. */
  async function digestOf(due: SavedSearchRow & { alertedThrough: Date }, tx: postgres.TransactionSql, through: Date) {
    const { request, problems } = parseSearchPage(due.query, settings.digestSize, deps.buyers.findPlace);
    if (problems.length) {
      // A filter that stopped making sense (a place no longer known): skipped, not guessed; kept for the next day.
      log.warn("saved search skipped: its filters are no longer valid", { savedSearchId: due.id });
      await advanceDigest(tx, due.id, due.alertedThrough, settings.digestIntervalSeconds);
      return;
    }
    const result = await deps.buyers.search({
      ...request,
      sort: "newest",
      changedAfter: due.alertedThrough.toISOString(),
      changedThrough: through.toISOString(),
    });
    if (result.results.length > 0) {
      const reducedAfter = due.alertedThrough.getTime();
      const listings = result.results.map((listing: PublicListingSummary) => ({
        listing,
        reduced: listing.priceReduced && new Date(listing.listedAt).getTime() <= reducedAfter,
      }));
      await insertMail(
        tx,
        due.id,
        digestMail({
          to: due.email,
          label: due.label,
          listings,
          total: result.total,
          links: links(due.query, due.unsubscribeToken),
        }),
      );
      log.info("saved search digest composed", {
        savedSearchId: due.id,
        listings: result.results.length,
        total: result.total,
      });
    }
    await advanceDigest(tx, due.id, through, settings.digestIntervalSeconds);
  }

  /** One round of the digest job: the digests due (a batch), and the clean-up of unconfirmed searches. */
  async function runDigests(batch = 20): Promise<{ due: number; expired: number }> {
    const through = new Date(Date.now() - settings.indexLagSeconds * 1000);
    const due = await forDueDigests(sql, batch, (d, tx) => digestOf(d, tx, through));
    const expired = await deleteUnconfirmed(sql, settings.confirmHours);
    if (expired) log.info("unconfirmed saved searches deleted", { count: expired });
    return { due, expired };
  }

  return {
    save,
    findPending: (token: string) => findByConfirmToken(sql, token, settings.confirmHours),
    confirm: (token: string) => confirmSearch(sql, token, settings.confirmHours, settings.digestIntervalSeconds),
    findByUnsubscribeToken: (token: string) => findByUnsubscribeToken(sql, token),
    unsubscribe: (token: string) => unsubscribe(sql, token),
    runDigests,
    links,
  };
}

export type SavedSearches = ReturnType<typeof createSavedSearches>;
