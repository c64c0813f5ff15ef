// docs/upgrades.md's compose upgrade runs the new release's migrations: the new image is pinned and pulled first,
// the migration runs with it, and only then are the services rolled (migrating with the running image applies
// nothing new, and the roll would start the new services on the old schema).
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const docs = readFileSync(join(import.meta.dir, "..", "..", "docs", "upgrades.md"), "utf8");
const section = (heading: string) => {
  const start = docs.indexOf(`\n## ${heading}\n`);
  expect(start).toBeGreaterThan(-1);
  const end = docs.indexOf("\n## ", start + heading.length + 5);
  return docs.slice(start, end === -1 ? undefined : end);
};

test("upgrading under compose: pin and pull the new image, migrate with it, then roll", () => {
  const upgrading = section("Upgrading");
  const pin = upgrading.search(/set `PSS_IMAGE` in `\.env` to the new release's image/);
  const pull = upgrading.indexOf("docker compose pull");
  const migrate = upgrading.indexOf("docker compose run --rm migrate");
  const roll = upgrading.indexOf("docker compose up -d --no-deps --wait");
  for (const at of [pin, pull, migrate, roll]) expect(at).toBeGreaterThan(-1);
  expect(pin).toBeLessThan(pull);
  expect(pull).toBeLessThan(migrate);
  expect(migrate).toBeLessThan(roll);
  // No step runs the migration before the image is pulled.
  expect(upgrading.slice(0, pull)).not.toContain("run --rm migrate");
});

test("rolling back under compose pins the previous image again and runs no migration", () => {
  const rollingBack = section("Rolling back");
  expect(rollingBack).toContain("Pin the previous image again");
  expect(rollingBack).not.toContain("run --rm migrate");
  expect(rollingBack).toContain("docker compose up -d --no-deps --wait");
});
