import { expect, test } from "bun:test";
import { loadMigrations, type Migration } from "./migrate.ts";
import { expandContractViolations } from "./migration-rules.ts";

const migration = (sql: string): Migration => ({ version: "9999", name: "example", sql, checksum: "" });

test("every migration in the repository only expands the schema, or marks its contract step", () => {
  const migrations = loadMigrations();
  expect(migrations.length).toBeGreaterThan(20);
  expect(expandContractViolations(migrations)).toEqual([]);
});

test("steps that would break the previous release are refused, each with its reason", () => {
  const found = expandContractViolations([
    migration(`
      ALTER TABLE listings DROP COLUMN title;
      DROP TABLE leads;
      ALTER TABLE brokers RENAME COLUMN name TO full_name;
      ALTER TABLE brokers ALTER COLUMN phone TYPE bigint USING phone::bigint;
      ALTER TABLE brokers ALTER COLUMN email SET NOT NULL;
      ALTER TABLE listings ADD COLUMN region text NOT NULL;
    `),
  ]);
  expect(found.map((v) => v.rule)).toEqual([
    "drops a column the previous release may read or write",
    "drops a table the previous release may read",
    "renames what the previous release names",
    "changes a column's type under the previous release",
    "makes an existing column NOT NULL (the previous release may write NULL)",
    "adds a NOT NULL column without a default (the previous release's INSERTs fail)",
  ]);
  expect(found[0]!.migration).toBe("9999_example");
});

test("expanding steps pass, and a contract step passes only with its mark naming the release", () => {
  expect(
    expandContractViolations([
      migration(`
        CREATE TABLE notes (id bigint PRIMARY KEY, body text NOT NULL);
        ALTER TABLE listings ADD COLUMN region text, ADD COLUMN rank integer NOT NULL DEFAULT 0;
        CREATE INDEX listings_region ON listings (region);
        ALTER TABLE brokers ALTER COLUMN phone DROP NOT NULL;
        -- contract: the old column, unused since v1.4.0
        ALTER TABLE listings DROP COLUMN legacy_title;
      `),
    ]),
  ).toEqual([]);
  // A mark without the release it waited for is not a contract step.
  expect(
    expandContractViolations([
      migration("-- contract: the old column\nALTER TABLE listings DROP COLUMN legacy_title;"),
    ]),
  ).toHaveLength(1);
});
