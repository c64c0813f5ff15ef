import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresDirs, SERVER_USER_HOME, serverDirOf } from "./postgres.ts";

const base = mkdtempSync(join(tmpdir(), "pss-postgres-dirs-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function checkout(name: string) {
  const root = join(base, name);
  mkdirSync(root, { recursive: true });
  return { root, dataDir: join(root, ".data"), cacheDir: join(base, "cache") };
}

test("under root the cluster lives in the postgres user's home, one directory per checkout path", () => {
  const a = checkout("a/partner-syndication-service");
  const b = checkout("b/partner-syndication-service");
  const dirsA = postgresDirs(a, true);
  expect(dirsA.local).toBe(join(a.root, ".data", "postgres"));
  expect(dirsA.server).toStartWith(`${SERVER_USER_HOME}/partner-syndication-service-`);
  // Two checkouts of the same name never share a cluster; the same checkout always finds its own.
  expect(postgresDirs(b, true).server).not.toBe(dirsA.server);
  expect(postgresDirs(a, true).server).toBe(dirsA.server);
  expect(serverDirOf(a.root, "/elsewhere")).toStartWith("/elsewhere/partner-syndication-service-");
});

test("run as its own user the server keeps its files in the checkout, as does a cluster initialised there before", () => {
  const plain = checkout("plain");
  expect(postgresDirs(plain, false).server).toBe(join(plain.root, ".data", "postgres"));
  const earlier = checkout("earlier");
  mkdirSync(join(earlier.dataDir, "postgres", "pgdata"), { recursive: true });
  writeFileSync(join(earlier.dataDir, "postgres", "pgdata", "PG_VERSION"), "15\n");
  expect(postgresDirs(earlier, true).server).toBe(join(earlier.root, ".data", "postgres"));
});
