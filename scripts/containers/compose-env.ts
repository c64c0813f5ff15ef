// `.env` beside docker-compose.yml: compose reads it for variable substitution, so `docker compose up` runs the
// images `npm run images` built. Lines this file did not write (an operator's own settings) are kept.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { IMAGE_VARIABLES } from "./image-variables.ts";

export const COMPOSE_ENV_FILE = join(import.meta.dir, "..", "..", ".env");
const MARK = "# written by npm run images";

export function writeComposeEnv(variables: Record<string, string>, file = COMPOSE_ENV_FILE): string {
  const names = new Set<string>([...IMAGE_VARIABLES.map((v) => v.name), ...Object.keys(variables)]);
  const kept = existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l !== MARK && !names.has(l.split("=")[0]!.trim()) && l.trim() !== "")
    : [];
  const lines = [...kept, MARK, ...Object.entries(variables).map(([k, v]) => `${k}=${v}`)];
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

/** The image variables a `.env` file sets (empty when there is none). */
export function readComposeEnv(file = COMPOSE_ENV_FILE): Record<string, string> {
  if (!existsSync(file)) return {};
  const names = new Set<string>([...IMAGE_VARIABLES.map((v) => v.name), "PSS_OPENSEARCH_NOFILE"]);
  const out: Record<string, string> = {};
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const m = /^\s*([A-Z0-9_]+)\s*=\s*(.*?)\s*$/.exec(line);
    if (m && names.has(m[1]!)) out[m[1]!] = m[2]!;
  }
  return out;
}
