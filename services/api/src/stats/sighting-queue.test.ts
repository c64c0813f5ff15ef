import { expect, test } from "bun:test";
import { createSightingQueue, type Sighting } from "./sighting-queue.ts";

const view = (address: string, visitor: string, listingId = 1): Sighting => ({
  kind: "view",
  listingId,
  day: "2026-05-01",
  address,
  visitor,
});

test("one address group holds at most perAddress visitors, whatever else arrives for it; repeats are not added", () => {
  const q = createSightingQueue({ max: 1000, perAddress: 3 });
  for (let i = 0; i < 10_000; i++) q.add(view("a1", `ua${i}`));
  expect(q.size()).toBe(3);
  expect(q.add(view("a1", "ua0"))).toBe(false);
  // Another address, another listing, another kind: groups of their own.
  expect(q.add(view("a2", "ua0"))).toBe(true);
  expect(q.add(view("a1", "ua0", 2))).toBe(true);
  expect(q.add({ ...view("a1", "ua0"), kind: "impression" })).toBe(true);
  expect(q.size()).toBe(6);
});

test("at most max entries wait: the oldest are dropped and counted, and their group has room again", () => {
  const q = createSightingQueue({ max: 100, perAddress: 3 });
  for (let i = 0; i < 5000; i++) q.add(view(`a${i}`, "ua"));
  expect(q.size()).toBe(100);
  expect(q.takeDropped()).toBe(4900);
  expect(q.takeDropped()).toBe(0);
  expect(q.waiting()[0]).toEqual(view("a4900", "ua"));
  expect(q.add(view("a0", "ua"))).toBe(true);
});

test("sightings put back go in front of those that arrived meanwhile, within the same bounds", () => {
  const q = createSightingQueue({ max: 3, perAddress: 2 });
  q.add(view("a", "1"));
  q.add(view("a", "2"));
  const taken = q.take();
  expect(q.size()).toBe(0);
  q.add(view("a", "3"));
  q.add(view("b", "1"));
  q.add(view("c", "1"));
  q.putBack(taken);
  // The two put back fill a's group, so a/3 is not added; then the oldest (a/1) gives way for c/1.
  expect(q.waiting().map((s) => `${s.address}/${s.visitor}`)).toEqual(["a/2", "b/1", "c/1"]);
  expect(q.takeDropped()).toBe(1);
});

test("one IPv6 site group holds at most perSite visitors, however many address groups (/64s) they come from", () => {
  const q = createSightingQueue({ max: 1000, perAddress: 3, perSite: 5 });
  for (let i = 0; i < 1000; i++) q.add({ ...view(`net${i}`, "ua"), site: "s1" });
  expect(q.size()).toBe(5);
  // Another site, or an IPv4 address (no site): groups of their own.
  expect(q.add({ ...view("net0", "ua2"), site: "s2" })).toBe(true);
  expect(q.add(view("v4", "ua"))).toBe(true);
  // What is taken comes back with its site.
  expect(q.take().filter((s) => s.site === "s1")).toHaveLength(5);
});
