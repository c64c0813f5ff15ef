import { expect, test } from "bun:test";
import { eventMode, isVisibleToBuyers, keyModeOf } from "./mode.ts";

test("only live listings in a buyer-visible status are visible to buyers", () => {
  expect(isVisibleToBuyers({ status: "FOR_SALE", mode: "live" })).toBe(true);
  expect(isVisibleToBuyers({ status: "UNDER_CONTRACT", mode: "live" })).toBe(true);
  expect(isVisibleToBuyers({ status: "FOR_SALE", mode: "test" })).toBe(false);
  expect(isVisibleToBuyers({ status: "DRAFT", mode: "live" })).toBe(false);
});

test("an event without a mode is live; anything but live is not", () => {
  expect(eventMode({})).toBe("live");
  expect(eventMode({ mode: "live" })).toBe("live");
  expect(eventMode({ mode: "test" })).toBe("test");
  expect(eventMode({ mode: "staging" })).toBe("test");
  expect(eventMode({ mode: null })).toBe("test");
});

test("a key's mode is its prefix's", () => {
  expect(keyModeOf("pss_test_abc")).toBe("test");
  expect(keyModeOf("pss_live_abc")).toBe("live");
});
