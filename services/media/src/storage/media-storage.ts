// Where processed variants live. Names are content addresses (see @pss/contracts media.ts), so a name's bytes
// never change and identical images are stored once.

export interface StoredFile {
  name: string;
  modifiedAt: Date;
}

export interface MediaStorage {
  /** Stores bytes under name; an existing name is kept and marked fresh (the garbage collector's grace restarts). */
  put(name: string, bytes: Uint8Array, contentType: string): Promise<void>;
  exists(name: string): Promise<boolean>;
  delete(name: string): Promise<void>;
  /** Public URL of a stored name. */
  url(name: string): string;
  /** Every stored name, for the garbage collector. */
  list(): AsyncIterable<StoredFile>;
  stat(name: string): Promise<StoredFile | null>;
  /** Removes leftovers of writes interrupted before `olderThan`. */
  removeAbandonedWrites(olderThan: Date): Promise<number>;
}

/** `<sha256 of bytes>.<ext>` */
export function contentName(bytes: Uint8Array, format: "webp" | "jpeg"): string {
  return `${new Bun.CryptoHasher("sha256").update(bytes).digest("hex")}.${format === "jpeg" ? "jpg" : "webp"}`;
}
