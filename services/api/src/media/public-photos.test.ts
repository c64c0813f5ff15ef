import { expect, test } from "bun:test";
import { publicPhotos, type PhotoState } from "./public-photos.ts";

const photo = (
  url: string,
  sortKey: number,
  state: PhotoState["state"],
  variants: unknown[] | null = state === "ready" ? [{}] : null,
): PhotoState => ({ url, sortKey, state, variants });

test("buyers see only ready photos, lower sortKey first; the input is left as it was", () => {
  const photos = [photo("c", 3, "ready"), photo("a", 1, "pending"), photo("b", -2, "ready"), photo("d", 0, "failed")];
  expect(publicPhotos(photos).map((p) => p.url)).toEqual(["b", "c"]);
  expect(photos.map((p) => p.url)).toEqual(["c", "a", "b", "d"]);
});

test("a ready photo without variants is not shown", () => {
  expect(publicPhotos([photo("a", 1, "ready", [])])).toEqual([]);
});
