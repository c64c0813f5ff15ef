// Reads a 32-byte encryption key (WEBHOOK_SECRET_KEY) from the environment or from a file named by <NAME>_FILE
// (a mounted secret; `npm start` and compose generate one for local use). Always required: there is no built-in
// key, so no deployment can run with a key published in this repository. The value is never echoed in a problem.
import { checkSecretKey, DEVELOPMENT_WEBHOOK_KEYS } from "./production-safety.ts";
import { readFileSync } from "node:fs";
import type { EnvReader } from "./config.ts";
import { parseSecretKey, SECRET_KEY_RULE } from "./secret-box.ts";

export function readSecretKey(
  r: EnvReader,
  name: string,
  readFile: (path: string) => string = (p) => readFileSync(p, "utf8"),
): Buffer {
  const placeholder = Buffer.alloc(32);
  const value = r.optionalString(name);
  const file = r.optionalString(`${name}_FILE`);
  if (value !== undefined && file !== undefined) {
    r.problem(`set ${name} or ${name}_FILE, not both`);
    return placeholder;
  }
  if (value === undefined && file === undefined) {
    r.problem(
      `${name} is required (or ${name}_FILE, a file holding it): 32 random bytes, e.g. \`openssl rand -base64 32\`; \`npm start\` generates one under .data/ for local development`,
    );
    return placeholder;
  }
  let text = value;
  if (file !== undefined) {
    try {
      text = readFile(file);
    } catch (err) {
      r.problem(
        `${name}_FILE: cannot read '${file}' (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
      return placeholder;
    }
  }
  const key = parseSecretKey(text ?? "");
  if (!key) {
    r.problem(`${file !== undefined ? `the file ${name}_FILE names ('${file}')` : name} ${SECRET_KEY_RULE}`);
    return placeholder;
  }
  // The key's bytes, so no other encoding of a published key (hex, unpadded base64, base64url) gets through.
  checkSecretKey(r, file !== undefined ? `the key in ${name}_FILE` : name, key, DEVELOPMENT_WEBHOOK_KEYS);
  return key;
}
