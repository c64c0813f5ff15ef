import { describe, expect, test } from "bun:test";
import { formatHuman, formatJson, formatTable } from "./output.ts";

describe("admin output", () => {
  test("JSON is one line with dates as ISO strings and undefined fields dropped", () => {
    const text = formatJson({ at: new Date("2026-01-02T03:04:05.000Z"), gone: undefined, rows: [{ a: 1 }] });
    expect(text).toBe('{"at":"2026-01-02T03:04:05.000Z","rows":[{"a":1}]}\n');
  });

  test("a table aligns columns, shows null as '-', and cuts long cells", () => {
    const text = formatTable(
      [
        { id: "1", name: "Acme", revokedAt: null },
        { id: "10", name: "x".repeat(80), extra: true },
      ],
      20,
    );
    const lines = text.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^id\s+name\s+revokedAt\s+extra$/);
    expect(lines[1]).toMatch(/^-+\s+-+/);
    expect(lines[2]).toMatch(/^1\s+Acme\s+-\s+-$/);
    expect(lines[3]).toContain(`${"x".repeat(19)}…`);
    expect(lines[0]!.indexOf("name")).toBe(lines[2]!.indexOf("Acme"));
    expect(formatTable([])).toBe("(none)\n");
  });

  test("objects read as key: value lines, lists under their key as tables", () => {
    const text = formatHuman({
      pending: 2,
      oldestPendingAgeMs: 1500,
      setAsideRows: [{ id: "7", reason: "too large" }],
    });
    expect(text).toBe(
      [
        "pending:            2",
        "oldestPendingAgeMs: 1500",
        "setAsideRows:",
        "  id  reason",
        "  --  ---------",
        "  7   too large",
        "",
      ].join("\n"),
    );
  });
});
