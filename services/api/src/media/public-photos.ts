// What buyers see of a listing's photos: only the processed ones, lower sortKey first.

export interface PhotoState {
  url: string;
  sortKey: number;
  state: "pending" | "ready" | "failed";
  variants: unknown[] | null;
}

export function publicPhotos<P extends PhotoState>(photos: readonly P[]): P[] {
  return photos
    .filter((p) => p.state === "ready" && (p.variants?.length ?? 0) > 0)
    .sort((a, b) => a.sortKey - b.sortKey);
}
