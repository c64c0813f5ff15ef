// What waits in memory for Redis to deduplicate it (issue 29): views and impressions as keyed hashes only, never an
// address or a User-Agent, and bounded: at most `perAddress` visitors per address group and `perSite` per IPv6 site
// group (more could never count), and at most `max` entries in all (then the oldest are dropped). A repeat of an
// entry already waiting is not added again. Each entry is held as one short string (about 50-70 characters). Pure.

export type SightingKind = "view" | "impression";

export interface Sighting {
  kind: SightingKind;
  listingId: number;
  day: string;
  /** Keyed hash of listing, day and address bucket (visitors.ts): the group the per-address cap counts in. */
  address: string;
  /** Keyed hash of listing, day, address bucket and User-Agent. */
  visitor: string;
  /** IPv6 only: keyed hash of listing, day and the address's /48, the group the per-site cap counts in. */
  site?: string;
}

const head = (s: Sighting) => `${s.kind === "view" ? "v" : "i"}|${s.day}|${s.listingId}`;
/** The groups a sighting is capped in, and its own identity: equal strings, equal sightings. */
export const groupOf = (s: Sighting) => `${head(s)}|${s.address}`;
export const siteGroupOf = (s: Sighting) => (s.site ? `${head(s)}|/${s.site}` : null);
export const idOf = (s: Sighting) => `${groupOf(s)}|${s.visitor}|${s.site ?? ""}`;

function parse(id: string): Sighting {
  const [kind, day, listingId, address, visitor, site] = id.split("|") as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  return {
    kind: kind === "v" ? "view" : "impression",
    listingId: Number(listingId),
    day,
    address,
    visitor,
    ...(site ? { site } : {}),
  };
}

export interface SightingQueue {
  /** False when not added: a repeat, or its address group (site group) already holds `perAddress` (`perSite`) visitors. */
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

export function createSightingQueue(opts: { max: number; perAddress: number; perSite?: number }): SightingQueue {
  let ids = new Set<string>();
  let groups = new Map<string, number>();
  let dropped = 0;
  const perSite = opts.perSite ?? Number.POSITIVE_INFINITY;

  const release = (group: string | null) => {
    if (group === null) return;
    const left = (groups.get(group) ?? 1) - 1;
    if (left > 0) groups.set(group, left);
    else groups.delete(group);
  };

  function add(s: Sighting): boolean {
    const id = idOf(s);
    if (ids.has(id)) return false;
    const group = groupOf(s);
    const site = siteGroupOf(s);
    const n = groups.get(group) ?? 0;
    if (n >= opts.perAddress) return false;
    if (site !== null && (groups.get(site) ?? 0) >= perSite) return false;
    const oldest = ids.size >= opts.max ? ids.values().next().value : undefined;
    if (oldest !== undefined) {
      ids.delete(oldest);
      const gone = parse(oldest);
      release(groupOf(gone));
      release(siteGroupOf(gone));
      dropped++;
    }
    ids.add(id);
    groups.set(group, (groups.get(group) ?? 0) + 1);
    if (site !== null) groups.set(site, (groups.get(site) ?? 0) + 1);
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
