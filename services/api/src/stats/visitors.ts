// Who counts as a visitor, without storing who they are (issue 24, part 3; issue 29). Pure.
import { createHmac } from "node:crypto";

/**
 * Known crawlers, link previewers, monitors and headless browsers: their requests are never counted. Matched
 * case-insensitively anywhere in the User-Agent's first USER_AGENT_CHARS characters; a request without one is
 * treated as a bot too.
 */
const BOT_PATTERN =
  /bot\b|bot\/|crawl|spider|slurp|mediapartners|facebookexternalhit|facebookcatalog|embedly|quora link preview|outbrain|pinterest|vkshare|w3c_validator|whatsapp|telegram|skypeuripreview|bingpreview|preview|headlesschrome|phantomjs|puppeteer|playwright|lighthouse|pingdom|uptimerobot|statuscake|monitor|curl\/|wget\/|python-requests|python-urllib|httpclient|okhttp|go-http-client|java\/|libwww|scrapy|axios\/|node-fetch|undici|bun\/|feedfetcher|rss|archive\.org|ia_archiver/i;

/** Browsers' User-Agents are a few hundred characters; a longer one costs no more to test or hash than this. */
export const USER_AGENT_CHARS = 512;

export function isKnownBot(userAgent: string | null | undefined): boolean {
  if (!userAgent || userAgent.trim().length === 0) return true;
  return BOT_PATTERN.test(userAgent.slice(0, USER_AGENT_CHARS));
}

/** The UTC day of an instant, as YYYY-MM-DD: the stats' bucket and the key's rotation period. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** What identifies a visitor of one listing on one day, as stored: keyed hashes, nothing readable. */
export interface VisitorHashes {
  /** The address (IPv6: its /64) on this listing this day: the group the per-address cap counts in. */
  address: string;
  /** The visitor within that group: the address and the User-Agent. */
  visitor: string;
  /** IPv6: the address's /48 on this listing this day, the group the per-site cap counts in. */
  site?: string;
}

const keyed = (dayKey: Buffer, text: string, length: number) =>
  createHmac("sha256", dayKey).update(text).digest("base64url").slice(0, length);

/**
 * A visitor's identity on one listing for one day: HMAC-SHA256 under that day's key (random, kept in PostgreSQL,
 * deleted once the day is over: stats-repository.ts) of the listing, the address bucket (addressBucket: an IPv4
 * address or an IPv6 /64) and, for `visitor`, the User-Agent; for an IPv6 address also of its /48 (`site`, given as
 * sitePrefix returns it). The listing is in each, so one visitor's hashes on two listings differ and cannot be
 * joined; once the key is gone, that day's hashes cannot be linked to anyone.
 */
export function visitorHashes(
  dayKey: Buffer,
  listingId: number,
  bucket: string,
  userAgent: string,
  site: string | null = null,
): VisitorHashes {
  const base = `${listingId}\n${bucket}\n`;
  return {
    address: keyed(dayKey, `a\n${base}`, 16),
    visitor: createHmac("sha256", dayKey)
      .update(`v\n${base}`)
      .update(userAgent.slice(0, USER_AGENT_CHARS))
      .digest("base64url")
      .slice(0, 11),
    ...(site ? { site: keyed(dayKey, `s\n${listingId}\n${site}\n`, 16) } : {}),
  };
}
