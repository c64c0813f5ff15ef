import { expect, test } from "bun:test";
import { variantsWithUrls } from "./variant-urls.ts";

const key = `${"ab".repeat(32)}.webp`;

test("a stored media key becomes a URL under the configured base, so a domain change needs no data migration", () => {
  const stored = [{ width: 400, height: 300, format: "webp", key }];
  expect(variantsWithUrls(stored, "https://market.example")).toEqual([
    { width: 400, height: 300, format: "webp", url: `https://market.example/media/${key}` },
  ]);
  expect(variantsWithUrls(stored, "https://new.example/")).toEqual([
    { width: 400, height: 300, format: "webp", url: `https://new.example/media/${key}` },
  ]);
});

test("a variant written before keys (an absolute URL) is shown as it was; nothing or junk shows as no variants", () => {
  expect(
    variantsWithUrls(
      [{ width: 1, height: 1, format: "jpeg", url: "https://old.example/media/x.jpg" }],
      "https://market.example",
    ),
  ).toEqual([{ width: 1, height: 1, format: "jpeg", url: "https://old.example/media/x.jpg" }]);
  expect(variantsWithUrls(null, "https://market.example")).toEqual([]);
  expect(
    variantsWithUrls([{ width: 1, height: 1, format: "webp", key: "../../etc/passwd" }], "https://market.example"),
  ).toEqual([]);
});
