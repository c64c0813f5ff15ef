// CI judges a run by the last test runner's closing line in its log. `npm test` prints exactly one of its own
// ("tests: N passed, M failed"); a line that a test passes through (a tool's report, a child process's output)
// must never read as another runner's closing line, or as a second plain one: a pytest-style banner such as
// Schemathesis's "=== 1 warning in 180.27s ===" made CI read a green run as "no test executed".

/** Closing lines of the runners CI knows, and the plain "N passed, N failed" form it reads in any language. */
const FOREIGN_CLOSING_LINES: RegExp[] = [
  /^=+ .* in [\d.]+s.* =+$/, // pytest (and tools that print its banner, e.g. Schemathesis)
  /^=+ no tests ran\b/i, // pytest, nothing collected
  /^(ok|FAIL|PASS)\b(\s+\S+\s+[\d.]+s)?$/, // go test
  /^DONE \d+ tests?/, // gotestsum
  /^test result: (ok|FAILED)\./, // cargo test
  /^\s*Summary \[.*\] \d+ tests? run/, // nextest
  /^[#ℹ] (tests|pass|fail) \d+$/, // node's test runner (TAP and spec reporters)
  /^Tests run: \d+, Failures: \d+/, // Maven Surefire
  /\d+% tests passed, \d+ tests? failed out of \d+/, // ctest
  /^Result: (PASS|FAIL|NOTESTS)$/, // prove
  /^\d+ examples?, \d+ failures?/, // RSpec
  /^\d+ runs, \d+ assertions, \d+ failures/, // minitest
  /^\s*(All \d+ tests passed\.|Failed: \d+\.\s+Passed: \d+\.)/, // EUnit
  /^\d+ (tests?|doctests?|properties), \d+ failures?/, // ExUnit
  /^\d+ of \d+ test suites \(\d+ of \d+ test cases\) passed\.$/, // cabal
  /^Ran: \d+ tests? in: [\d.]+ seconds?\.$/, // OUnit
  /^(OK \(\d+ tests?, \d+ assertions?\)|Tests: \d+, Assertions: \d+)/, // PHPUnit
  /^\[====\] Synthesis: Tested: \d+/, // Criterion
  /^\[ {2}(PASSED|FAILED) {2}\] \d+ test/, // cmocka
  /^\s*(tests|asserts)\s+\d+\s+\d+\s+\d+\s+\d+/, // CUnit
  /^\d+%: Checks: \d+, Failures: \d+/, // Check
  /^(Executed \d+ tests?, with \d+ failures?|[✔✘◇] Test run with \d+ tests?)/, // swift test
  /^(\w+: )?\d+ passed, \d+ failed(, \d+ skipped)?$/, // the plain line: only npm test's own may print it
];

export function isForeignClosingLine(line: string): boolean {
  const plain = line.replace(/\x1b\[[0-9;]*m/g, "").trim();
  return FOREIGN_CLOSING_LINES.some((re) => re.test(plain));
}

/** The line as it is shown in the log: quoted, so it can no longer read as a closing line. */
export function quoteClosingLine(line: string): string {
  return `(passed through) ${line
    .replace(/\x1b\[[0-9;]*m/g, "")
    .trim()
    .replace(/=+/g, "-")}`;
}

/** A block of text with each foreign closing line quoted. */
export function quoteForeignClosingLines(text: string): string {
  return text
    .split("\n")
    .map((line) => (isForeignClosingLine(line) ? quoteClosingLine(line) : line))
    .join("\n");
}

/** A stream filter over text chunks split anywhere: whole lines out, each foreign closing line quoted. */
export function createClosingLineGuard(write: (text: string) => void) {
  let partial = "";
  return {
    push(text: string) {
      const lines = (partial + text).split("\n");
      partial = lines.pop() ?? "";
      if (lines.length > 0) write(`${quoteForeignClosingLines(lines.join("\n"))}\n`);
    },
    end() {
      if (partial) write(quoteForeignClosingLines(partial));
      partial = "";
    },
  };
}
