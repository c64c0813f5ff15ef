// Who counts as a visitor, without storing who they are (issue 24, part 3). Pure.
import { createHmac } from "node:crypto";

/**
 * Known crawlers, link previewers, monitors and headless browsers: their requests are never counted. Matched
 * case-insensitively anywhere in the User-Agent; a request without one is treated as a bot too.
 */
const BOT_PATTERN =
  /bot\b|bot\/|crawl|spider|slurp|mediapartners|facebookexternalhit|facebookcatalog|embedly|quora link preview|outbrain|pinterest|vkshare|w3c_validator|whatsapp|telegram|skypeuripreview|bingpreview|preview|headlesschrome|phantomjs|puppeteer|playwright|lighthouse|pingdom|uptimerobot|statuscake|monitor|curl\/|wget\/|python-requests|python-urllib|httpclient|okhttp|go-http-client|java\/|libwww|scrapy|axios\/|node-fetch|undici|bun\/|feedfetcher|rss|archive\.org|ia_archiver/i;

export function isKnownBot(userAgent: string | null | undefined): boolean {
  if (!userAgent || userAgent.trim().length === 0) return true;
  return BOT_PATTERN.test(userAgent);
}

/** The UTC day of an instant, as YYYY-MM-DD: the stats' bucket and the key's rotation period. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/**
 * A visitor's identity for one day: HMAC-SHA256 under that day's key of the address and the User-Agent. The key
 * is random, shared by every API instance through Redis and dropped after two days, so yesterday's hashes cannot
 * be linked to today's or turned back into addresses.
 */
export function visitorHash(dayKey: string, address: string, userAgent: string): string {
  return createHmac("sha256", dayKey).update(address).update("\n").update(userAgent).digest("base64url").slice(0, 22);
}
