import { afterEach, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { acknowledged, CheckpointMismatchError, keyModeOf, openCheckpoint } from "./checkpoint.ts";

const dirs: string[] = [];
const fresh = () => {
  const dir = mkdtempSync(join(tmpdir(), "pss-checkpoint-"));
  dirs.push(dir);
  return join(dir, "feed.ndjson.checkpoint");
};
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
const owner = { apiUrl: "https://api.example.com/", apiKey: "pss_live_abc", partner: "partner:p-1" };

test("entries survive a reopen, the latest line of a record wins, and compaction keeps one line per record", () => {
  const path = fresh();
  const a = openCheckpoint(path, owner);
  a.record({ kind: "listing", id: "L-1", hash: "h1", serviceId: 1, url: "u1" });
  a.record({ kind: "listing", id: "L-1", hash: "h2", serviceId: 1, url: "u1" });
  a.record({ kind: "broker", id: "L-1", hash: "hb", serviceId: "9", url: "ub" });
  a.close();
  expect(readFileSync(path, "utf8").trim().split("\n")).toHaveLength(4);
  const b = openCheckpoint(path, owner);
  expect(b.get("listing", "L-1")?.hash).toBe("h2");
  expect(b.get("broker", "L-1")?.serviceId).toBe("9");
  b.compact();
  b.close();
  expect(readFileSync(path, "utf8").trim().split("\n")).toHaveLength(3);
});

test("a line torn by a kill mid-write is ignored; the records before it are kept", () => {
  const path = fresh();
  const a = openCheckpoint(path, owner);
  a.record({ kind: "listing", id: "L-1", hash: "h1", serviceId: 1, url: "u1" });
  a.close();
  appendFileSync(path, '{"kind":"listing","id":"L-2","ha');
  const b = openCheckpoint(path, owner);
  expect([...b.entries()].map((e) => e.id)).toEqual(["L-1"]);
  b.record({ kind: "listing", id: "L-3", hash: "h3", serviceId: 3, url: "u3" });
  b.close();
  // The torn line does not swallow the next record's line on the next reopen.
  expect(openCheckpoint(path, owner).get("listing", "L-3")?.hash).toBe("h3");
});

test("nothing recorded is written before a flush; flush appends it", () => {
  const path = fresh();
  const a = openCheckpoint(path, owner, { flushEveryMs: 60_000 });
  a.record({ kind: "listing", id: "L-1", hash: "h1", serviceId: 1, url: "u1" });
  expect(readFileSync(path, "utf8")).not.toContain("L-1");
  a.flush();
  expect(readFileSync(path, "utf8")).toContain("L-1");
  a.close();
});

test("an intent is in the file when intend() returns; a record whose last line is an intent is in doubt after a reopen", async () => {
  const path = fresh();
  const a = openCheckpoint(path, owner, { flushEveryMs: 60_000 });
  a.record({ kind: "listing", id: "L-1", hash: "h1", serviceId: 1, url: "u1" });
  a.intend("listing", "L-1", "h2");
  // Written with the acknowledgement before it, in order, without waiting for the flush timer.
  expect(
    readFileSync(path, "utf8")
      .trim()
      .split("\n")
      .slice(1)
      .map((l) => JSON.parse(l)),
  ).toEqual([
    { kind: "listing", id: "L-1", hash: "h1", serviceId: 1, url: "u1" },
    { kind: "listing", id: "L-1", hash: "h1", serviceId: 1, url: "u1", sending: "h2" },
  ]);
  // Killed here (nothing closed): the reopened checkpoint knows L-1 is in doubt, and skipping h1 is not allowed.
  const b = openCheckpoint(path, owner);
  expect(b.get("listing", "L-1")).toEqual({
    kind: "listing",
    id: "L-1",
    hash: "h1",
    serviceId: 1,
    url: "u1",
    sending: "h2",
  });
  expect(acknowledged(b.get("listing", "L-1"), "h1")).toBe(false);
  // Compaction keeps the doubt.
  b.compact();
  b.close();
  expect(openCheckpoint(path, owner).get("listing", "L-1")?.sending).toBe("h2");
  a.close();
});

test("the acknowledgement after an intent settles the record; a refusal puts back what was there", async () => {
  const path = fresh();
  const a = openCheckpoint(path, owner);
  a.intend("listing", "L-1", "h1");
  a.record({ kind: "listing", id: "L-1", hash: "h1", serviceId: 1, url: "u1" });
  a.intend("listing", "L-1", "h2");
  a.refused("listing", "L-1");
  a.intend("listing", "L-2", "h9");
  a.refused("listing", "L-2");
  a.close();
  const b = openCheckpoint(path, owner);
  expect(acknowledged(b.get("listing", "L-1"), "h1")).toBe(true);
  expect(b.get("listing", "L-2")).toBeUndefined();
  b.close();
});

test("a checkpoint of another partner is refused, whatever the key; one without a partner (version 1) only when bound explicitly", () => {
  const path = fresh();
  openCheckpoint(path, owner).close();
  expect(() => openCheckpoint(path, { ...owner, apiKey: "pss_live_other", partner: "partner:p-2" })).toThrow(
    `${path} belongs to another partner (partner:p-1), not to this key's partner (partner:p-2)`,
  );
  // Another key of the same partner (rotated) is fine.
  expect(() => openCheckpoint(path, { ...owner, apiKey: "pss_live_rotated" }).close()).not.toThrow();
  const old = fresh();
  writeFileSync(
    old,
    `${JSON.stringify({ type: "pss-sync-checkpoint", version: 1, apiUrl: "https://api.example.com", keyMode: "pss_live" })}\n${JSON.stringify({ kind: "listing", id: "L-1", hash: "h1", serviceId: 1, url: "u" })}\n`,
  );
  // Any partner's key could have written it: refused until the user binds it, and nothing is written to it.
  const before = readFileSync(old, "utf8");
  expect(() => openCheckpoint(old, owner)).toThrow(CheckpointMismatchError);
  expect(() => openCheckpoint(old, owner)).toThrow(
    `${old} was written by an earlier pss-sync that did not record whose records it holds`,
  );
  expect(() => openCheckpoint(old, owner)).toThrow("run again with --bind-checkpoint");
  expect(readFileSync(old, "utf8")).toBe(before);
  const adopted = openCheckpoint(old, owner, { bindUnowned: true });
  expect(adopted.get("listing", "L-1")?.hash).toBe("h1");
  adopted.close();
  // Bound: another partner is refused (even with the flag), and the binding partner needs no flag any more.
  expect(() => openCheckpoint(old, { ...owner, partner: "partner:p-2" }, { bindUnowned: true })).toThrow(
    "belongs to another partner (partner:p-1)",
  );
  expect(() => openCheckpoint(old, owner).close()).not.toThrow();
});

test("a checkpoint of another API URL or key mode is refused, not silently mixed", () => {
  const path = fresh();
  openCheckpoint(path, owner).close();
  expect(() => openCheckpoint(path, { ...owner, apiUrl: "https://other.example.com" })).toThrow(
    CheckpointMismatchError,
  );
  expect(() => openCheckpoint(path, { ...owner, apiKey: "pss_test_abc" })).toThrow("with a pss_live key");
  // Another key of the same mode (a rotated key) is fine, and a trailing slash does not matter.
  expect(() =>
    openCheckpoint(path, {
      apiUrl: "https://api.example.com",
      apiKey: "pss_live_other",
      partner: owner.partner,
    }).close(),
  ).not.toThrow();
  expect(keyModeOf("pss_test_xyz")).toBe("pss_test");
});
