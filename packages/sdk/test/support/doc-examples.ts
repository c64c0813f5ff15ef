// Reads the runnable examples out of a markdown document (docs/sdk.md, docs/sync.md) and compares what they
// print with what the document says they print. The conventions, in a fence's info string:
//   ```ts run          a TypeScript program, run as it is; a ```text output block after it shows its output
//   ```text output     the expected output of the `ts run` block before it (no block: it prints nothing)
//   ```console         a terminal session: "$ command" lines are run in order, the lines under each are its output
//   ```<lang> file=x   a file the sessions after it use (written before the next session runs)
// In expected output "…" stands for any text within a line, and a line of only "…" for any number of lines.
import { readFileSync } from "node:fs";

export interface CodeBlock {
  /** The language: the info string's first word. */
  lang: string;
  /** The info string's other words: `run`, `output`, `file=<name>`. */
  attrs: Record<string, string | true>;
  code: string;
  /** 1-based line of the opening fence, for messages. */
  line: number;
}

export function codeBlocks(markdown: string): CodeBlock[] {
  const lines = markdown.split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const words = info!.trim().split(/\s+/).filter(Boolean);
    const attrs: Record<string, string | true> = {};
    for (const w of words.slice(1)) {
      const eq = w.indexOf("=");
      if (eq === -1) attrs[w] = true;
      else attrs[w.slice(0, eq)] = w.slice(eq + 1);
    }
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && lines[j]!.trim() !== fence; j++)
      body.push(lines[j]!.startsWith(indent!) ? lines[j]!.slice(indent!.length) : lines[j]!);
    if (j === lines.length) throw new Error(`line ${i + 1}: code block never closed`);
    blocks.push({ lang: words[0] ?? "", attrs, code: body.join("\n"), line: i + 1 });
    i = j;
  }
  return blocks;
}

export function documentBlocks(path: string): CodeBlock[] {
  return codeBlocks(readFileSync(path, "utf8"));
}

export interface SessionStep {
  command: string;
  expected: string[];
}

/** A ```console block as commands ("$ …") each with the lines shown under it. */
export function sessionSteps(block: CodeBlock): SessionStep[] {
  const steps: SessionStep[] = [];
  for (const line of block.code.split("\n")) {
    if (line.startsWith("$ ")) steps.push({ command: line.slice(2), expected: [] });
    else if (steps.length === 0) {
      if (line.trim()) throw new Error(`line ${block.line}: a console block must start with a "$ " command`);
    } else steps.at(-1)!.expected.push(line);
  }
  return steps;
}

/** What a terminal shows: redrawn lines (\r) end as their last drawing, escape sequences and blank lines go. */
export function screenLines(raw: string): string[] {
  return raw
    .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")
    .split("\n")
    .map((line) => line.replace(/\r+$/, "").split("\r").at(-1)!.trimEnd())
    .filter((line) => line.length > 0);
}

const ANY_LINES = "…";

function linePattern(expected: string): RegExp {
  const parts = expected
    .trimEnd()
    .split("…")
    .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*?")}$`, "s");
}

/**
 * Null when `actual` is what `expected` shows (blank lines aside), else a message naming the first line that
 * differs. A line of only "…" matches any number of lines.
 */
export function outputMismatch(expected: string[], actual: string[]): string | null {
  const want = expected.map((l) => l.trimEnd()).filter((l) => l.length > 0);
  const got = actual.map((l) => l.trimEnd()).filter((l) => l.length > 0);
  const patterns = want.map((l) => (l.trim() === ANY_LINES ? null : linePattern(l)));
  // The furthest expected line reached, for the message.
  let furthest = { want: 0, got: 0 };
  const memo = new Map<string, boolean>();
  const match = (w: number, g: number): boolean => {
    const key = `${w}:${g}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    if (w > furthest.want || (w === furthest.want && g > furthest.got)) furthest = { want: w, got: g };
    let ok: boolean;
    if (w === want.length) ok = g === got.length;
    else if (patterns[w] === null) ok = match(w + 1, g) || (g < got.length && match(w, g + 1));
    else ok = g < got.length && patterns[w]!.test(got[g]!) && match(w + 1, g + 1);
    memo.set(key, ok);
    return ok;
  };
  if (match(0, 0)) return null;
  const expectedLine = want[furthest.want] ?? "(the end of the output)";
  const actualLine = got[furthest.got] ?? "(the end of the output)";
  return `expected line ${JSON.stringify(expectedLine)}, got ${JSON.stringify(actualLine)}\n--- expected\n${want.join("\n")}\n--- actual\n${got.join("\n")}`;
}
