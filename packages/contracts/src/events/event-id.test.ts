import { expect, test } from "bun:test";
import { newEventId } from "./event-id.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test("an event ID is a version-7 UUID carrying its creation time in its first 48 bits", () => {
  const at = Date.UTC(2026, 10, 28, 6, 30, 0, 123);
  const id = newEventId(at);
  expect(id).toMatch(UUID);
  expect(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
});

test("IDs made later sort after earlier ones (a B-tree takes them at its right edge); each is unique", () => {
  const ids = Array.from({ length: 2000 }, (_, i) => newEventId(1_800_000_000_000 + Math.floor(i / 10)));
  expect(new Set(ids).size).toBe(ids.length);
  for (let i = 10; i < ids.length; i += 10) expect(ids[i]! > ids[i - 1]!).toBe(true);
  expect(newEventId()).toMatch(UUID);
});
