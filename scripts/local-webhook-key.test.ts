import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEnvReader, readSecretKey } from "@pss/service-kit";
import { localWebhookKeyEnv } from "./local-webhook-key.ts";

test("npm start generates a local webhook key once, owner-only, that the services' config accepts, and keeps it", () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), "pss-start-")), ".data");
  const env = localWebhookKeyEnv({}, dataDir);
  const file = env.WEBHOOK_SECRET_KEY_FILE!;
  expect(file).toBe(join(dataDir, "webhook-secret-key"));
  expect(statSync(file).mode & 0o777).toBe(0o600);
  const first = readFileSync(file, "utf8");
  const r = createEnvReader(env);
  expect(readSecretKey(r, "WEBHOOK_SECRET_KEY")).toHaveLength(32);
  r.done();
  expect(localWebhookKeyEnv({}, dataDir)).toEqual(env);
  expect(readFileSync(file, "utf8")).toBe(first);
});

test("a key named by the environment is used as it is: nothing is generated", () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), "pss-start-")), ".data");
  expect(localWebhookKeyEnv({ WEBHOOK_SECRET_KEY: "k".repeat(43) }, dataDir)).toEqual({});
  expect(localWebhookKeyEnv({ WEBHOOK_SECRET_KEY_FILE: "/run/secrets/key" }, dataDir)).toEqual({});
  expect(() => statSync(dataDir)).toThrow();
});
