import { expect, test } from "bun:test";
import { createClosingLineGuard, isForeignClosingLine } from "./closing-lines.ts";

test("Schemathesis's pytest-style banner, the other runners' closing lines and a second plain line are foreign", () => {
  for (const line of [
    "=================== 1 warning in 180.27s (0:03:00) ====================",
    "======================= No issues found in 12.3s =======================",
    "ok  \tgithub.com/x/y\t0.012s",
    "test result: ok. 3 passed; 0 failed; 0 ignored",
    "Tests run: 4, Failures: 0, Errors: 0, Skipped: 0",
    "# pass 12",
    "12 examples, 0 failures",
    "tests: 5 passed, 0 failed",
    "5 passed, 0 failed, 1 skipped",
  ])
    expect(isForeignClosingLine(line)).toBe(true);
});

test("bun's own report lines and ordinary output pass unchanged", () => {
  for (const line of [
    "(pass) a listing is stored [12.00ms]",
    " 1188 pass",
    " 0 fail",
    "Ran 1188 tests across 201 files. [1463.11s]",
    "scale test: 60 of 60 listing writes acknowledged, 20 leads",
    "contract: st run http://127.0.0.1:1/partner/v1/openapi.json",
  ])
    expect(isForeignClosingLine(line)).toBe(false);
});

test("the guard quotes a foreign closing line split across chunks and keeps every other byte", () => {
  let out = "";
  const guard = createClosingLineGuard((text) => {
    out += text;
  });
  const input = "(pass) first\n===== 3 passed in 1.2s =====\nlast line without newline";
  for (let i = 0; i < input.length; i += 5) guard.push(input.slice(i, i + 5));
  guard.end();
  expect(out).toBe("(pass) first\n(passed through) - 3 passed in 1.2s -\nlast line without newline");
  expect(out.split("\n").some(isForeignClosingLine)).toBe(false);
});
