// One workspace owns (writes) each table; a second one writes only the column group its comment names. The owner is
// recorded in the schema (COMMENT ON TABLE, migration 0028 and each later migration that adds a table) and in
// docs/architecture.md; this test keeps both complete and in agreement.
import { afterAll, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";

const root = join(import.meta.dir, "..", "..", "..");
const sql = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
afterAll(() => sql.end());

/** Tables and partitioned tables; a partition belongs to its parent (api_request_log_0 … to api_request_log). */
async function tableComments(): Promise<Map<string, string | null>> {
  const rows = await sql<{ name: string; comment: string | null }[]>`
    SELECT c.relname AS name, obj_description(c.oid, 'pg_class') AS comment
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition`;
  return new Map(rows.map((r) => [r.name, r.comment]));
}

/** The owner a comment names: `owner: services/api; …` gives services/api. */
const ownerOf = (comment: string | null) => /^owner: ([a-z0-9/-]+)/.exec(comment ?? "")?.[1] ?? null;

/** `| \`table\` | \`owner\` | …` rows of the ownership table in docs/architecture.md. */
function documentedOwners(): Map<string, string> {
  const doc = readFileSync(join(root, "docs", "architecture.md"), "utf8");
  return new Map([...doc.matchAll(/^\| `([a-z_]+)` \| `([a-z0-9/-]+)` \|/gm)].map((m) => [m[1]!, m[2]!]));
}

test("every table names its owner, a workspace of this repository", async () => {
  const comments = await tableComments();
  expect(comments.size).toBeGreaterThan(20);
  const problems: string[] = [];
  for (const [table, comment] of comments) {
    const owner = ownerOf(comment);
    if (!owner)
      problems.push(`${table}: no 'owner: <workspace>' comment (COMMENT ON TABLE in the migration that creates it)`);
    else if (!existsSync(join(root, owner, "package.json")))
      problems.push(`${table}: owner ${owner} is not a workspace`);
  }
  expect(problems).toEqual([]);
});

test("docs/architecture.md lists every table with the owner the schema names", async () => {
  const comments = await tableComments();
  const fromSchema = Object.fromEntries([...comments].map(([t, c]) => [t, ownerOf(c)]).sort());
  const fromDoc = Object.fromEntries([...documentedOwners()].sort());
  expect(fromDoc).toEqual(fromSchema);
});
