// The expand/contract rule (docs/upgrades.md): during a rolling upgrade the previous release's services run against
// the new schema, and a rollback runs them against it for good. So a migration may only EXPAND the schema (new
// tables, new columns that are nullable or have a default, new indexes, relaxed constraints); a step that would
// break the previous release's reads or writes is a CONTRACT step, allowed only when the statement is marked
//   -- contract: <what>, unused since vX.Y.Z
// (the release after which no running code reads or writes it; it ships in a later release than that one).
import type { Migration } from "./migrate.ts";

export interface RuleViolation {
  migration: string;
  statement: string;
  rule: string;
}

const RULES: { rule: string; test: RegExp }[] = [
  { rule: "drops a table the previous release may read", test: /\bDROP\s+TABLE\b/i },
  { rule: "drops a column the previous release may read or write", test: /\bDROP\s+COLUMN\b/i },
  { rule: "renames what the previous release names", test: /\bRENAME\b/i },
  {
    rule: "changes a column's type under the previous release",
    test: /\bALTER\s+COLUMN\s+\S+\s+(SET\s+DATA\s+)?TYPE\b/i,
  },
  { rule: "makes an existing column NOT NULL (the previous release may write NULL)", test: /\bSET\s+NOT\s+NULL\b/i },
];

/** ADD COLUMN … NOT NULL without a DEFAULT or GENERATED value: the previous release's INSERTs would fail. */
function addsRequiredColumn(statement: string): boolean {
  return /\bADD\s+COLUMN\b/i.test(statement)
    ? statement
        .split(/\bADD\s+COLUMN\b/i)
        .slice(1)
        .some((column) => /\bNOT\s+NULL\b/i.test(column) && !/\b(DEFAULT|GENERATED)\b/i.test(column))
    : false;
}

/** Statements with the comments that precede each (a `-- contract:` mark belongs to the statement after it). */
function statementsOf(sql: string): { text: string; marked: boolean }[] {
  const out: { text: string; marked: boolean }[] = [];
  let marked = false;
  let current = "";
  for (const line of sql.split("\n")) {
    const trimmed = line.trim();
    if (trimmed.startsWith("--")) {
      if (/^--\s*contract:.*\bunused since v\d+\.\d+\.\d+/i.test(trimmed) && current.trim() === "") marked = true;
      continue;
    }
    current += `${line.replace(/--.*$/, "")}\n`;
    // Dollar-quoted bodies (functions, DO blocks) are kept whole: split only outside them.
    if (trimmed.endsWith(";") && (current.match(/\$\$/g)?.length ?? 0) % 2 === 0) {
      out.push({ text: current.trim(), marked });
      current = "";
      marked = false;
    }
  }
  if (current.trim()) out.push({ text: current.trim(), marked });
  return out;
}

export function expandContractViolations(migrations: Migration[]): RuleViolation[] {
  const violations: RuleViolation[] = [];
  for (const m of migrations)
    for (const s of statementsOf(m.sql)) {
      if (s.marked) continue;
      const broken = RULES.filter((r) => r.test.test(s.text)).map((r) => r.rule);
      if (addsRequiredColumn(s.text))
        broken.push("adds a NOT NULL column without a default (the previous release's INSERTs fail)");
      for (const rule of broken)
        violations.push({
          migration: `${m.version}_${m.name}`,
          statement: s.text.replace(/\s+/g, " ").slice(0, 160),
          rule,
        });
    }
  return violations;
}
