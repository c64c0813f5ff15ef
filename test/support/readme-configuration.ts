// The variables named in the first column of the README's configuration table (README.md, "## Configuration").
import { readFileSync } from "node:fs";
import { join } from "node:path";

export function readmeConfigurationVariables(root = join(import.meta.dir, "..", "..")): Set<string> {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const start = readme.indexOf("\n## Configuration");
  const section = readme.slice(start, readme.indexOf("\n## ", start + 5));
  const names = new Set<string>();
  for (const line of section.split("\n")) {
    const firstCell = /^\|([^|]*)\|/.exec(line)?.[1] ?? "";
    for (const m of firstCell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.add(m[1]!);
  }
  return names;
}
