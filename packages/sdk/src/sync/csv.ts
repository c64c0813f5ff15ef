// CSV input (RFC 4180): quoted fields may hold commas, quotes ("") and line breaks. Columns `kind` and `id`,
// then the body's fields as dotted paths (`location.city`, `financials.askingPrice`); arrays and objects as
// JSON in one cell. A cell is typed by the OpenAPI schema of its field: numbers, booleans and JSON are
// converted, so `450000` is a number for askingPrice and a string for a title.

/** Rows of cells. Accepts LF or CRLF line ends and a UTF-8 byte-order mark. */
export function parseCsv(text: string): { rows: string[][]; lines: number[] } {
  const rows: string[][] = [];
  const lines: number[] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const endRow = () => {
    row.push(cell);
    if (!(row.length === 1 && row[0] === "")) {
      rows.push(row);
      lines.push(rowLine);
    }
    row = [];
    cell = "";
  };
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          cell += '"';
          i++;
        } else quoted = false;
      } else {
        if (c === "\n") line++;
        cell += c;
      }
    } else if (c === '"' && cell === "") quoted = true;
    else if (c === ",") {
      row.push(cell);
      cell = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      endRow();
      line++;
      rowLine = line;
    } else cell += c;
  }
  if (quoted) throw new Error(`line ${rowLine}: a quoted cell is never closed`);
  if (cell !== "" || row.length) endRow();
  return { rows, lines };
}

/** The JSON type a field holds, looked up in the body schema: "string", "number", "integer", "boolean", "array", "object" or null (unknown field). */
export type FieldTypeLookup = (kind: string, path: string[]) => string | null;

export class CsvCellError extends Error {}

/** A cell converted to the field's type. "" means "not sent"; `null` sends JSON null (clears the field). */
export function cellValue(raw: string, type: string | null, column: string): unknown {
  if (raw === "null") return null;
  switch (type) {
    case "number":
    case "integer": {
      const n = Number(raw.trim());
      return raw.trim() !== "" && Number.isFinite(n) ? n : raw;
    }
    case "boolean":
      return /^true$/i.test(raw.trim()) ? true : /^false$/i.test(raw.trim()) ? false : raw;
    case "array":
    case "object":
      try {
        return JSON.parse(raw);
      } catch {
        throw new CsvCellError(
          `${column}: the cell is not valid JSON (arrays and objects are written as JSON in one cell)`,
        );
      }
    default:
      return raw;
  }
}

export interface CsvRecord {
  line: number;
  kind: string;
  id: string;
  body: Record<string, unknown>;
}

/** Turns rows (the first is the header) into records; a record that cannot be built is returned as a problem. */
export function csvRecords(
  text: string,
  typeOf: FieldTypeLookup,
): { records: CsvRecord[]; problems: { line: number; kind: string | null; id: string | null; error: string }[] } {
  const { rows, lines } = parseCsv(text);
  const header = rows[0];
  if (!header) return { records: [], problems: [] };
  const columns = header.map((h) => h.trim());
  const kindAt = columns.indexOf("kind");
  const idAt = columns.indexOf("id");
  if (kindAt === -1 || idAt === -1) throw new Error("the CSV header must name the columns kind and id");
  const duplicate = columns.find((c, i) => columns.indexOf(c) !== i);
  if (duplicate) throw new Error(`the CSV header names the column ${duplicate} twice`);
  const records: CsvRecord[] = [];
  const problems: { line: number; kind: string | null; id: string | null; error: string }[] = [];
  rows.slice(1).forEach((cells, r) => {
    const line = lines[r + 1]!;
    const kind = cells[kindAt] ?? "";
    const id = cells[idAt] ?? "";
    if (cells.length !== columns.length) {
      problems.push({
        line,
        kind: kind || null,
        id: id || null,
        error: `line ${line}: ${cells.length} cells where the header has ${columns.length}`,
      });
      return;
    }
    try {
      const body: Record<string, unknown> = {};
      columns.forEach((column, c) => {
        if (c === kindAt || c === idAt || cells[c] === "") return;
        const path = column.split(".");
        setPath(body, path, cellValue(cells[c]!, typeOf(kind, path), column), column);
      });
      records.push({ line, kind, id, body });
    } catch (err) {
      if (!(err instanceof CsvCellError)) throw err;
      problems.push({ line, kind: kind || null, id: id || null, error: err.message });
    }
  });
  return { records, problems };
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown, column: string): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (next === undefined) node = node[key] = {} as Record<string, unknown>;
    else if (next && typeof next === "object" && !Array.isArray(next)) node = next as Record<string, unknown>;
    else throw new CsvCellError(`${column}: another column already gives ${key} a value that is not an object`);
  }
  node[path.at(-1)!] = value;
}
