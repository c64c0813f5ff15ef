import { expect, test } from "bun:test";
import { BackupError, loadOrder } from "./table-order.ts";

test("tables load after the tables their foreign keys reference, otherwise in the given order", () => {
  const order = loadOrder(
    ["leads", "listings", "brokers", "partners", "outbox"],
    [
      { from: "leads", to: "listings" },
      { from: "listings", to: "brokers" },
      { from: "listings", to: "partners" },
      { from: "brokers", to: "partners" },
    ],
  );
  expect(order).toEqual(["partners", "brokers", "listings", "leads", "outbox"]);
});

test("a table referencing itself loads in its own place; keys to tables not backed up are ignored", () => {
  expect(
    loadOrder(
      ["b", "a"],
      [
        { from: "a", to: "a" },
        { from: "b", to: "leader_leases" },
      ],
    ),
  ).toEqual(["b", "a"]);
});

test("a cycle between tables is refused, naming them", () => {
  expect(() =>
    loadOrder(
      ["x", "y", "z"],
      [
        { from: "y", to: "z" },
        { from: "z", to: "y" },
      ],
    ),
  ).toThrow(new BackupError("the foreign keys of y, z form a cycle: no load order exists"));
});
