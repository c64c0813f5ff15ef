// Event IDs are UUIDs in the version-7 layout (RFC 9562): the first 48 bits the creation time in milliseconds, the
// rest random (74 bits). Any UUID reader takes them as before; what changes is where they sort. The change feed
// keeps every event's ID in a B-tree (partner_feed_event, for the webhooks' lookups): random version-4 IDs landed
// each insertion on a random leaf page, and after every checkpoint the first change to a page logs all of it, so a
// numbered event cost a whole page of WAL (about 3 KB measured, issue 43, docs/benchmarks.md). Time-ordered IDs go
// to the index's right edge, as a sequence would. Plain Web Crypto, so it runs wherever the contracts do.

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

/** A new event ID: a version-7 UUID, in the canonical lower-case form. */
export function newEventId(now: number = Date.now()): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  // 48-bit big-endian millisecond timestamp.
  let t = Math.max(0, Math.floor(now));
  for (let i = 5; i >= 0; i--) {
    b[i] = t % 256;
    t = Math.floor(t / 256);
  }
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x70; // version 7
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80; // variant 10
  const h = hex(b);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
