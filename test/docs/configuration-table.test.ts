// Every environment variable a service's configuration reads is a row of the README's configuration table, and
// every row names something the code (or the runtime) reads: operators find each setting in one place.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { readmeConfigurationVariables } from "../support/readme-configuration.ts";

const root = join(import.meta.dir, "..", "..");
/** Read by the code, but not an operator's setting. */
const INTERNAL: Record<string, string> = {
  API_WORKER_INDEX: "set by the API's primary process for each worker it starts",
};
/** Table rows the code does not read through an EnvReader. */
const READ_ELSEWHERE: Record<string, string> = {
  BUN_OPTIONS: "read by the Bun runtime itself",
  SERVICE_HEALTH_PORT: "read by the image's HEALTHCHECK command (Dockerfile)",
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === "node_modules") return [];
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith(".ts") && !name.endsWith(".test.ts") ? [path] : [];
  });
}

function variablesReadByCode(): Set<string> {
  const names = new Set<string>();
  const dirs = ["services", "packages"].flatMap((top) =>
    readdirSync(join(root, top)).map((workspace) => join(root, top, workspace, "src")),
  );
  for (const file of dirs.flatMap((d) =>
    statSync(d, { throwIfNoEntry: false })?.isDirectory() ? sourceFiles(d) : [],
  )) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/\br\.(?:string|optionalString|int|bool|url|list|oneOf)\(\s*"([A-Z0-9_]+)"/g))
      names.add(m[1]!);
    // A limit or an allowlist that can switch a protection off, and its production override NAME_I_UNDERSTAND
    // (service-kit config.ts, production-safety.ts).
    for (const m of text.matchAll(/\b(?:readLimit|readAllowedHosts)\(\s*r,\s*"([A-Z0-9_]+)"/g))
      names.add(m[1]!).add(`${m[1]}_I_UNDERSTAND`);
    // Any other setting refused in production unless NAME_I_UNDERSTAND=true (production-safety.ts).
    for (const m of text.matchAll(/\brefuseUnlessUnderstood\(\s*r,\s*"([A-Z0-9_]+)"/g))
      names.add(`${m[1]}_I_UNDERSTAND`);
    // A server's TLS files: <PREFIX>_TLS_CA_FILE, _CERT_FILE, _KEY_FILE (tls-files.ts).
    for (const m of text.matchAll(/\breadTlsFiles\(\s*r,\s*"([A-Z0-9_]+)"/g))
      for (const file of ["CA", "CERT", "KEY"]) names.add(`${m[1]}_TLS_${file}_FILE`);
    // A server named by URL (connection-security.ts readUrlSecurity): <PREFIX>_USERNAME and _PASSWORD winning over
    // the URL's, its TLS files, and <PREFIX>_URL_I_UNDERSTAND for a password sent without TLS.
    for (const m of text.matchAll(/\breadUrlSecurity\(\s*r,\s*\w+,\s*\{\s*prefix:\s*"([A-Z0-9_]+)"/g)) {
      for (const file of ["CA", "CERT", "KEY"]) names.add(`${m[1]}_TLS_${file}_FILE`);
      names.add(`${m[1]}_USERNAME`).add(`${m[1]}_PASSWORD`).add(`${m[1]}_URL_I_UNDERSTAND`);
    }
    // A credential sent without TLS, refused in production unless NAME_I_UNDERSTAND=true (production-safety.ts).
    for (const m of text.matchAll(/\bcheckPlaintextCredential\(\s*r,\s*\{\s*variable:\s*"([A-Z0-9_]+)"/g))
      names.add(`${m[1]}_I_UNDERSTAND`);
    // A secret key is read as NAME or NAME_FILE (secret-key-config.ts).
    for (const m of text.matchAll(/\b(?:readSecretKey\(\s*r|readRequiredKey\(\s*r,\s*env),\s*"([A-Z0-9_]+)"/g))
      names.add(m[1]!).add(`${m[1]}_FILE`);
  }
  return names;
}

const tableVariables = () => readmeConfigurationVariables(root);

test("every variable the services' configuration reads has a row in the README's configuration table", () => {
  const read = variablesReadByCode();
  expect(read.size).toBeGreaterThan(50);
  const table = tableVariables();
  const missing = [...read].filter((name) => !table.has(name) && !(name in INTERNAL)).sort();
  expect(missing).toEqual([]);
});

test("every row of the configuration table names a variable something reads", () => {
  const read = variablesReadByCode();
  const stale = [...tableVariables()].filter((name) => !read.has(name) && !(name in READ_ELSEWHERE)).sort();
  expect(stale).toEqual([]);
});
