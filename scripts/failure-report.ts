// The failing tests' own output, collected from `bun test`'s stream to be repeated at the end of `npm test`.
/**
 * bun test prints a failing test's errors and output before its "(fail) name" line: keep the lines since the
 * previous test result and, for each failure, the last of them (at most 40 lines, 10 failures).
 */
export function createFailureCollector(opts: { maxLines?: number; maxFailures?: number } = {}) {
  const MAX_LINES = opts.maxLines ?? 40;
  const MAX_FAILURES = opts.maxFailures ?? 10;
  let since: string[] = [];
  let partial = "";
  const kept: string[] = [];
  return {
    push(text: string) {
      const lines = (partial + text).split("\n");
      partial = lines.pop()!;
      for (const line of lines) {
        const plain = line.replace(/\x1b\[[0-9;]*m/g, "");
        if (plain.startsWith("(fail)") && kept.length < MAX_FAILURES && !kept.some((k) => k.endsWith(plain))) {
          kept.push([...since.slice(-MAX_LINES), plain].join("\n"));
        }
        if (/^\((pass|fail|skip|todo)\)/.test(plain) || /\.test\.ts:$/.test(plain)) since = [];
        else since.push(plain);
      }
    },
    blocks: () => kept,
  };
}
