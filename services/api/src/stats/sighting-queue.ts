// What waits in memory for Redis to deduplicate it (issue 29): views and impressions as keyed hashes only, never an
// address or a User-Agent, and bounded twice: at most `perAddress` visitors per address group (more could never
// count) and at most `max` entries in all (then the oldest are dropped). A repeat of an entry already waiting is
// not added again. Each entry is held as one short string (about 50 characters). Pure.

export type SightingKind = "view" | "impression";

export interface Sighting {
  kind: SightingKind;
  listingId: number;
  day: string;
  /** Keyed hash of listing, day and address bucket (visitors.ts): the group the per-address cap counts in. */
  address: string;
  /** Keyed hash of listing, day, address bucket and User-Agent. */
  visitor: string;
}

/** The group a sighting is capped in, and its own identity: equal strings, equal sightings. */
export const groupOf = (s: Sighting) => `${s.kind === "view" ? "v" : "i"}|${s.day}|${s.listingId}|${s.address}`;
export const idOf = (s: Sighting) => `${groupOf(s)}|${s.visitor}`;

function parse(id: string): Sighting {
  const [kind, day, listingId, address, visitor] = id.split("|") as [string, string, string, string, string];
  return { kind: kind === "v" ? "view" : "impression", listingId: Number(listingId), day, address, visitor };
}
const groupOfId = (id: string) => id.slice(0, id.lastIndexOf("|"));

export interface SightingQueue {
  /** False when not added: a repeat, or its address group already holds `perAddress` visitors. */
  add(s: Sighting): boolean;
  /** Everything waiting, oldest first; the queue is empty afterwards. */
  take(): Sighting[];
  /** Sightings taken but not settled go back in front of what arrived meanwhile, within the same bounds. */
  putBack(list: readonly Sighting[]): void;
  size(): number;
  /** What waits, oldest first. */
  waiting(): Sighting[];
  /** Entries dropped for room since the last call. */
  takeDropped(): number;
}

export function createSightingQueue(opts: { max: number; perAddress: number }): SightingQueue {
  let ids = new Set<string>();
  let groups = new Map<string, number>();
  let dropped = 0;

  function add(s: Sighting): boolean {
    const id = idOf(s);
    if (ids.has(id)) return false;
    const group = groupOf(s);
    const n = groups.get(group) ?? 0;
    if (n >= opts.perAddress) return false;
    const oldest = ids.size >= opts.max ? ids.values().next().value : undefined;
    if (oldest !== undefined) {
      ids.delete(oldest);
      const g = groupOfId(oldest);
      const left = (groups.get(g) ?? 1) - 1;
      if (left > 0) groups.set(g, left);
      else groups.delete(g);
      dropped++;
    }
    ids.add(id);
    groups.set(group, n + 1);
    return true;
  }

  function take(): Sighting[] {
    const list = [...ids].map(parse);
    ids = new Set();
    groups = new Map();
    return list;
  }

  return {
    add,
    take,
    putBack(list) {
      const meanwhile = take();
      for (const s of list) add(s);
      for (const s of meanwhile) add(s);
    },
    size: () => ids.size,
    waiting: () => [...ids].map(parse),
    takeDropped() {
      const n = dropped;
      dropped = 0;
      return n;
    },
  };
}
