// The image installs production dependencies only (`bun install --production`), so a package that a
// workspace imports without declaring it resolves locally (through the root's devDependencies) and fails
// in the container at start-up, as @sinclair/typebox did in service-kit.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";

const root = join(import.meta.dir, "..", "..");

/** Packages a source file imports at run time: `import type` and relative, node: and bun imports left out. */
export function runtimeImports(source: string): string[] {
  const specs = new Set<string>();
  const patterns = [
    /^\s*(?:import|export)\s+(?!type\b)[^;'"]*?\sfrom\s+["']([^"']+)["']/gm, // import x from "p" / export { x } from "p"
    /^\s*import\s+["']([^"']+)["']/gm, // import "p"
    /\bimport\(\s*["']([^"']+)["']\s*\)/g, // import("p")
  ];
  for (const pattern of patterns) for (const m of source.matchAll(pattern)) specs.add(m[1]!);
  return [...specs]
    .filter((s) => !s.startsWith(".") && !s.startsWith("/") && !s.startsWith("node:") && s !== "bun" && !s.startsWith("bun:"))
    .map((s) => (s.startsWith("@") ? s.split("/").slice(0, 2).join("/") : s.split("/")[0]!));
}

test("runtimeImports finds value imports and ignores type-only, relative and built-in ones", () => {
  const source = [
    'import { Value } from "@sinclair/typebox/value";',
    'import type { Static } from "@sinclair/typebox";',
    'import {\n  Partitioners,\n  type Consumer,\n} from "kafkajs";',
    'import postgres from "postgres";',
    'import { join } from "node:path";',
    'import { x } from "./x.ts";',
    'export { y } from "elysia";',
    'import "sharp";',
    'const m = await import("ioredis");',
    'import { test } from "bun:test";',
  ].join("\n");
  expect(runtimeImports(source).sort()).toEqual(["@sinclair/typebox", "elysia", "ioredis", "kafkajs", "postgres", "sharp"]);
});

test("every package a workspace's code imports is declared in that workspace's own package.json", () => {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { workspaces: string[] };
  const undeclared: string[] = [];
  let checked = 0;
  for (const pattern of manifest.workspaces) {
    for (const manifestPath of new Bun.Glob(`${pattern}/package.json`).scanSync({ cwd: root })) {
      const dir = dirname(manifestPath);
      const pkg = JSON.parse(readFileSync(join(root, manifestPath), "utf8")) as { dependencies?: Record<string, string> };
      const declared = new Set(Object.keys(pkg.dependencies ?? {}));
      for (const file of new Bun.Glob("**/*.ts").scanSync({ cwd: join(root, dir) })) {
        // Tests (beside the code or under test/) run from the checkout, where the root's devDependencies exist.
        if (file.endsWith(".test.ts") || file.startsWith("test/") || file.includes("node_modules/")) continue;
        checked += 1;
        for (const name of runtimeImports(readFileSync(join(root, dir, file), "utf8"))) {
          if (!declared.has(name)) undeclared.push(`${dir}/${file} imports ${name}`);
        }
      }
    }
  }
  expect(checked).toBeGreaterThan(50);
  expect(undeclared).toEqual([]);
});
