import { expect, test } from "bun:test";
import { formatOf, parseCsvFeed, parseNdjson } from "./feed.ts";

test("NDJSON: one record a line; unreadable lines become problems with their line number", () => {
  const text = [
    JSON.stringify({ kind: "broker", id: "B-1", body: { name: "A", email: "a@example.com" } }),
    "",
    "{not json",
    JSON.stringify({ kind: "office", id: "O-1", body: {} }),
    JSON.stringify({ kind: "listing", id: "", body: {} }),
    JSON.stringify({ kind: "listing", id: "L-1", body: [] }),
    JSON.stringify({ kind: "listing", id: "L-2", body: { status: "SOLD" }, note: "x" }),
    JSON.stringify({ kind: "listing", id: "L-3", body: { status: "SOLD" } }),
  ].join("\n");
  const feed = parseNdjson(text);
  expect(feed.records.map((r) => [r.line, r.kind, r.id])).toEqual([
    [1, "broker", "B-1"],
    [8, "listing", "L-3"],
  ]);
  expect(feed.problems.map((p) => p.error)).toEqual([
    "line 3: not valid JSON",
    'line 4: kind must be "broker" or "listing"',
    "line 5: id must be a non-empty string (the external ID)",
    "line 6: body must be a JSON object (the PUT body)",
    "line 7: unknown member note (a record has kind, id and body)",
  ]);
});

test("CSV feeds give the same records as NDJSON", () => {
  const csv = parseCsvFeed("kind,id,name,email,status\nbroker,B-1,A,a@example.com,\nlisting,L-1,,,SOLD\n");
  expect(csv.records.map(({ kind, id, body }) => ({ kind, id, body }))).toEqual([
    { kind: "broker", id: "B-1", body: { name: "A", email: "a@example.com" } },
    { kind: "listing", id: "L-1", body: { status: "SOLD" } },
  ]);
});

test("the format follows the extension unless given", () => {
  expect(formatOf("feed.csv")).toBe("csv");
  expect(formatOf("feed.CSV")).toBe("csv");
  expect(formatOf("feed.ndjson")).toBe("ndjson");
  expect(formatOf("feed.txt", "csv")).toBe("csv");
  expect(() => formatOf("feed", "xml")).toThrow("--format must be ndjson or csv");
});
