// How a command's result is printed: one JSON document on one line for scripts (stdout not a terminal, or
// --json), and for a person at a terminal the same data as aligned tables and `key: value` lines.

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** Dates as ISO strings, undefined fields dropped: the JSON and the table show the same values. */
export function toJson(value: unknown): Json {
  return JSON.parse(JSON.stringify(value ?? null)) as Json;
}

export function formatJson(result: unknown): string {
  return `${JSON.stringify(toJson(result))}\n`;
}

const isRecord = (v: Json): v is { [key: string]: Json } => typeof v === "object" && v !== null && !Array.isArray(v);

function cell(v: Json | undefined): string {
  if (v === null || v === undefined) return "-";
  if (typeof v === "string") return v.replace(/\s*\n\s*/g, " ");
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/** Columns are the union of the rows' keys, in first-seen order. Long cells are cut so a row fits a line. */
export function formatTable(rows: { [key: string]: Json }[], maxCell = 60): string {
  if (rows.length === 0) return "(none)\n";
  const columns: string[] = [];
  for (const row of rows) for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
  const cut = (s: string) => (s.length > maxCell ? `${s.slice(0, maxCell - 1)}…` : s);
  const body = rows.map((row) => columns.map((c) => cut(cell(row[c]))));
  const widths = columns.map((c, i) => Math.max(c.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(columns), line(widths.map((w) => "-".repeat(w))), ...body.map(line)].join("\n") + "\n";
}

/** Scalars as `key: value`; arrays of objects as tables under their key; nested objects indented. */
export function formatHuman(result: unknown, indent = ""): string {
  const value = toJson(result);
  if (!isRecord(value))
    return Array.isArray(value) && value.every(isRecord)
      ? formatTable(value as { [key: string]: Json }[])
      : `${cell(value)}\n`;
  const scalars = Object.entries(value).filter(([, v]) => !Array.isArray(v) && !isRecord(v));
  const width = Math.max(0, ...scalars.map(([k]) => k.length));
  let out = "";
  for (const [key, v] of Object.entries(value)) {
    if (Array.isArray(v) && v.every(isRecord))
      out += `${indent}${key}:\n${formatTable(v as { [key: string]: Json }[]).replace(/^(?=.)/gm, `${indent}  `)}`;
    else if (isRecord(v)) out += `${indent}${key}:\n${formatHuman(v, `${indent}  `)}`;
    else if (Array.isArray(v)) out += `${indent}${`${key}:`.padEnd(width + 2)}${v.map(cell).join(", ")}\n`;
    else out += `${indent}${`${key}:`.padEnd(width + 2)}${cell(v)}\n`;
  }
  return out.replace(/ +\n/g, "\n");
}
