import { expect, test } from "bun:test";
import { publicIndexAction } from "./public-index-rule.ts";

test("live listings are indexed in a buyer-visible status and removed otherwise", () => {
  expect(publicIndexAction({ status: "FOR_SALE", mode: "live" })).toEqual({ kind: "index" });
  expect(publicIndexAction({ status: "UNDER_CONTRACT", mode: "live" })).toEqual({ kind: "index" });
  expect(publicIndexAction({ status: "SOLD", mode: "live" })).toEqual({ kind: "delete" });
  expect(publicIndexAction({ status: "DRAFT", mode: "live" })).toEqual({ kind: "delete" });
});

test("a test listing never touches the index; its recorded state is the one a live listing would get", () => {
  expect(publicIndexAction({ status: "FOR_SALE", mode: "test" })).toEqual({ kind: "track", state: "indexed" });
  expect(publicIndexAction({ status: "SOLD", mode: "test" })).toEqual({ kind: "track", state: "removed" });
  // A live row whose event says test (or anything not live) is not trusted with the index either.
  expect(publicIndexAction({ status: "FOR_SALE", mode: "live" }, "test")).toEqual({ kind: "track", state: "indexed" });
});
