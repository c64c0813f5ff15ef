// Maven Central is the real server here (mvn with the machine's local repository); no other server is needed.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveUnpacked } from "./maven.ts";
import { OPENSEARCH_SECURITY_PLUGIN } from "./secured/opensearch-security.ts";

const caches: string[] = [];
afterAll(() => {
  for (const dir of caches) rmSync(dir, { recursive: true, force: true });
});

test("an unpacked artifact arrives whole in every cache, not only the first one on the machine", async () => {
  for (let i = 0; i < 2; i++) {
    const cache = mkdtempSync(join(tmpdir(), "pss-maven-cache-"));
    caches.push(cache);
    const dir = await resolveUnpacked(OPENSEARCH_SECURITY_PLUGIN, cache, "opensearch-security");
    expect(existsSync(join(dir, "plugin-descriptor.properties"))).toBe(true);
    expect(readdirSync(dir).filter((f) => f.endsWith(".jar")).length).toBeGreaterThan(10);
  }
  // mvn's "already unpacked" markers went with its working directory, not into the checkout.
  expect(existsSync(join(process.cwd(), "${project.basedir}"))).toBe(false);
}, 180_000);
