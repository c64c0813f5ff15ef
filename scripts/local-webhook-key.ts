// `npm start` needs a WEBHOOK_SECRET_KEY (it encrypts partners' webhook signing secrets) and asks nobody for one:
// unless the environment names a key, a random one is generated once into .data/webhook-secret-key (owner-only)
// and kept, because the secrets stored with it are unreadable under another key. There is no built-in key, so
// no deployment can run with a key published in this repository; production passes its own (README, Configuration).
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const LOCAL_WEBHOOK_KEY_FILE = "webhook-secret-key";

/** The variables the API and the webhooks service get: none when the environment already names a key. */
export function localWebhookKeyEnv(env: Record<string, string | undefined>, dataDir: string): Record<string, string> {
  if (env.WEBHOOK_SECRET_KEY?.trim() || env.WEBHOOK_SECRET_KEY_FILE?.trim()) return {};
  const file = join(dataDir, LOCAL_WEBHOOK_KEY_FILE);
  mkdirSync(dataDir, { recursive: true });
  try {
    // "wx": never overwrites; a key already there (an earlier start) is the one to keep.
    writeFileSync(file, `${randomBytes(32).toString("base64")}\n`, { flag: "wx", mode: 0o600 });
    console.error(`start: generated a local WEBHOOK_SECRET_KEY in ${file} (kept for later starts)`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  return { WEBHOOK_SECRET_KEY_FILE: file };
}
