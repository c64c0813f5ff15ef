// Feed files of realistic records (the benchmark's bodies: ~3 KB listings with 8 photos).
import { writeFileSync } from "node:fs";
import { brokerBody, listingBody } from "../../../../bench/lib/bodies.mjs";

export interface FeedLine {
  kind: "broker" | "listing";
  id: string;
  body: Record<string, unknown>;
}

/** `brokers` brokers, then `listings` listings spread over them (the feed lists listings first: the CLI orders). */
export function feedLines(prefix: string, counts: { brokers: number; listings: number }): FeedLine[] {
  const brokers = Array.from({ length: counts.brokers }, (_, i) => ({
    kind: "broker" as const,
    id: `${prefix}-b${i}`,
    body: brokerBody(i),
  }));
  const listings = Array.from({ length: counts.listings }, (_, i) => ({
    kind: "listing" as const,
    id: `${prefix}-l${i}`,
    body: listingBody(`${prefix}-b${i % counts.brokers}`, i),
  }));
  return [...listings, ...brokers];
}

export function writeFeed(path: string, lines: FeedLine[]): string {
  writeFileSync(path, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  return path;
}
