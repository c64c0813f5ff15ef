// The order a logical backup is loaded in: every table after the tables its foreign keys point at, so each
// COPY finds the rows it references. Computed from the catalog (restore.ts), not a hand-kept list that a new
// migration could leave behind.

export interface ForeignKey {
  /** The table holding the key. */
  from: string;
  /** The table it references. */
  to: string;
}

export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BackupError";
  }
}

/**
 * `tables` in an order where each comes after those it references; ties keep the given order (stable, so a
 * restore loads the same way each time). A table referencing itself loads in one COPY, whose key checks run at
 * its end, so self-references are no constraint. A cycle between tables has no such order and is refused.
 */
export function loadOrder(tables: readonly string[], keys: readonly ForeignKey[]): string[] {
  const known = new Set(tables);
  const waitsFor = new Map(tables.map((t) => [t, new Set<string>()]));
  for (const k of keys) if (k.from !== k.to && known.has(k.to)) waitsFor.get(k.from)?.add(k.to);
  const order: string[] = [];
  const placed = new Set<string>();
  while (order.length < tables.length) {
    const next = tables.find((t) => !placed.has(t) && [...(waitsFor.get(t) ?? [])].every((d) => placed.has(d)));
    if (next === undefined) {
      const left = tables.filter((t) => !placed.has(t));
      throw new BackupError(`the foreign keys of ${left.join(", ")} form a cycle: no load order exists`);
    }
    order.push(next);
    placed.add(next);
  }
  return order;
}
