import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ConfigError, createEnvReader } from "./config.ts";
import { readSecretKey } from "./secret-key-config.ts";

function problems(env: Record<string, string>): string[] {
  const r = createEnvReader(env);
  readSecretKey(r, "WEBHOOK_SECRET_KEY");
  try {
    r.done();
    return [];
  } catch (err) {
    return (err as ConfigError).problems;
  }
}

test("a key is required, from the variable or from the file <NAME>_FILE names, never both", () => {
  expect(problems({}).join()).toContain("WEBHOOK_SECRET_KEY is required (or WEBHOOK_SECRET_KEY_FILE");
  const key = randomBytes(32);
  const dir = mkdtempSync(join(tmpdir(), "secret-key-"));
  writeFileSync(join(dir, "key"), `${key.toString("base64")}\n`);
  const fromFile = createEnvReader({ WEBHOOK_SECRET_KEY_FILE: join(dir, "key") });
  expect(readSecretKey(fromFile, "WEBHOOK_SECRET_KEY")).toEqual(key);
  expect(readSecretKey(createEnvReader({ WEBHOOK_SECRET_KEY: key.toString("hex") }), "WEBHOOK_SECRET_KEY")).toEqual(
    key,
  );
  expect(problems({ WEBHOOK_SECRET_KEY: key.toString("hex"), WEBHOOK_SECRET_KEY_FILE: join(dir, "key") })).toEqual([
    "set WEBHOOK_SECRET_KEY or WEBHOOK_SECRET_KEY_FILE, not both",
  ]);
  expect(problems({ WEBHOOK_SECRET_KEY_FILE: join(dir, "missing") }).join()).toContain("cannot read");
});

test("a malformed key is refused without echoing it", () => {
  const [problem] = problems({ WEBHOOK_SECRET_KEY: "hunter2-not-a-key" });
  expect(problem).toContain("WEBHOOK_SECRET_KEY must be 32 bytes");
  expect(problem).not.toContain("hunter2");
});
