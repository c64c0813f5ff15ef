// `npm run format`: Biome's formatter over everything `npm run lint` checks (biome.jsonc). Biome 2.6 sometimes
// settles a long method chain only on a second pass, so this repeats until `biome format` finds nothing left to
// change (at most three passes): one command leaves the tree as `npm run lint` wants it.
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const biome = join(root, "node_modules", ".bin", "biome");
const run = (args: string[]) =>
  Bun.spawnSync([biome, ...args], { cwd: root, stdout: "ignore", stderr: "inherit" }).exitCode;

for (let pass = 1; pass <= 3; pass++) {
  if (run(["format", "--write"]) !== 0) process.exit(1);
  if (run(["format"]) === 0) process.exit(0);
}
console.error("format: the formatter did not settle after three passes; run `npm run lint` to see where");
process.exit(1);
