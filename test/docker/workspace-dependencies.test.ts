// The image installs production dependencies only (`bun install --production`), so a package that a
// workspace imports without declaring it resolves locally (through the root's devDependencies) and fails
// in the container at start-up, as @sinclair/typebox did in service-kit.
// The workspaces' boundaries (docs/architecture.md): code reaches another workspace only by its package name,
// declared in its package.json and through that workspace's `exports`, never by a relative path out of its folder
// (the admin CLI once imported indexer and media source as ../../../indexer/src/…).
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";

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
    .filter(
      (s) => !s.startsWith(".") && !s.startsWith("/") && !s.startsWith("node:") && s !== "bun" && !s.startsWith("bun:"),
    )
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
  expect(runtimeImports(source).sort()).toEqual([
    "@sinclair/typebox",
    "elysia",
    "ioredis",
    "kafkajs",
    "postgres",
    "sharp",
  ]);
});

test("every package a workspace's code imports is declared in that workspace's own package.json", () => {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { workspaces: string[] };
  const undeclared: string[] = [];
  let checked = 0;
  for (const pattern of manifest.workspaces) {
    for (const manifestPath of new Bun.Glob(`${pattern}/package.json`).scanSync({ cwd: root })) {
      const dir = dirname(manifestPath);
      const pkg = JSON.parse(readFileSync(join(root, manifestPath), "utf8")) as {
        dependencies?: Record<string, string>;
      };
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

interface Workspace {
  /** Folder from the repository root, e.g. services/api. */
  dir: string;
  name: string;
  dependencies: Record<string, string>;
  exports?: string | Record<string, string | Record<string, string>>;
}

function workspaces(): Workspace[] {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { workspaces: string[] };
  return manifest.workspaces.flatMap((pattern) =>
    [...new Bun.Glob(`${pattern}/package.json`).scanSync({ cwd: root })].map((path) => {
      const pkg = JSON.parse(readFileSync(join(root, path), "utf8")) as Omit<Workspace, "dir">;
      return { dir: dirname(path), name: pkg.name, dependencies: pkg.dependencies ?? {}, exports: pkg.exports };
    }),
  );
}

/** Every module specifier of a file, type-only ones included, and relative-path strings that name a module file. */
export function allSpecifiers(source: string): string[] {
  const specs = new Set<string>();
  const patterns = [
    /^\s*(?:import|export)\s+[^;'"]*?\sfrom\s+["']([^"']+)["']/gm, // import (type) x from "p" / export … from "p"
    /^\s*import\s+["']([^"']+)["']/gm, // import "p"
    /\bimport\(\s*["']([^"']+)["']\s*\)/g, // import("p"), typeof import("p")
    /["'](\.\.\/[^"'\s]+\.(?:ts|mjs|js))["']/g, // "../x.ts" held in a constant and imported later
  ];
  for (const pattern of patterns) for (const m of source.matchAll(pattern)) specs.add(m[1]!);
  return [...specs];
}

/** Does `exports` publish `subpath` ("." or "./name")? Patterns like "./*" count. */
function exportsSubpath(exports: Workspace["exports"], subpath: string): boolean {
  if (exports === undefined) return false;
  if (typeof exports === "string") return subpath === ".";
  return Object.keys(exports).some(
    (key) =>
      key === subpath || (key.endsWith("*") && subpath.startsWith(key.slice(0, -1)) && subpath.length > key.length - 1),
  );
}

/** Why an import of `file` (repository-relative) in workspace `ws` crosses a boundary, or null when it does not. */
export function boundaryViolation(ws: Workspace, file: string, spec: string, all: Workspace[]): string | null {
  if (spec.startsWith(".")) {
    const target = posix.normalize(posix.join(posix.dirname(file), spec));
    return target.startsWith(`${ws.dir}/`)
      ? null
      : `${file} imports ${spec}: a relative path out of ${ws.dir} (import the workspace by its package name)`;
  }
  const [scope, name, ...rest] = spec.split("/");
  const other = all.find((w) => w.name === `${scope}/${name}`);
  if (!other || other.dir === ws.dir) return null;
  if (!(other.name in ws.dependencies))
    return `${file} imports ${spec}: ${other.name} is not a dependency in ${ws.dir}/package.json`;
  const subpath = rest.length ? `./${rest.join("/")}` : ".";
  return exportsSubpath(other.exports, subpath)
    ? null
    : `${file} imports ${spec}: ${other.dir}/package.json does not export '${subpath}'`;
}

test("boundaryViolation refuses relative paths out of the workspace, undeclared workspaces and unpublished entry points", () => {
  const api: Workspace = {
    dir: "services/api",
    name: "@pss/api",
    dependencies: {},
    exports: { "./partner-admin": "./src/admin/partner-admin.ts" },
  };
  const kit: Workspace = {
    dir: "packages/service-kit",
    name: "@pss/service-kit",
    dependencies: {},
    exports: { ".": "./src/index.ts", "./*": "./src/*.ts" },
  };
  const admin: Workspace = {
    dir: "services/admin",
    name: "@pss/admin",
    dependencies: { "@pss/api": "workspace:*", "@pss/service-kit": "workspace:*" },
  };
  const all = [api, kit, admin];
  const file = "services/admin/src/commands.ts";
  expect(boundaryViolation(admin, file, "./admin-config.ts", all)).toBeNull();
  expect(boundaryViolation(admin, "services/admin/src/a/b.ts", "../commands.ts", all)).toBeNull();
  expect(boundaryViolation(admin, file, "../../indexer/src/reindex/reindex.ts", all)).toContain(
    "relative path out of services/admin",
  );
  expect(boundaryViolation(admin, file, "../../../infra/src/index.ts", all)).toContain(
    "relative path out of services/admin",
  );
  expect(boundaryViolation(admin, file, "@pss/api/partner-admin", all)).toBeNull();
  expect(boundaryViolation(admin, file, "@pss/api/outbox-status", all)).toContain("does not export './outbox-status'");
  expect(boundaryViolation(admin, file, "@pss/api", all)).toContain("does not export '.'");
  expect(boundaryViolation(admin, file, "@pss/service-kit/dead-letters", all)).toBeNull();
  expect(boundaryViolation(api, "services/api/src/x.ts", "@pss/service-kit", all)).toContain("not a dependency");
  expect(boundaryViolation(admin, file, "kafkajs", all)).toBeNull();
  expect(
    allSpecifiers(
      'import type { A } from "../../x/src/a.ts";\nconst M = "../../../infra/src/index.ts";\nlet r: typeof import("@pss/infra");',
    ),
  ).toEqual(["../../x/src/a.ts", "@pss/infra", "../../../infra/src/index.ts"]);
});

test("no workspace's code leaves its folder by a relative path or reaches another workspace except through its declared, exported name", () => {
  const all = workspaces();
  const violations: string[] = [];
  let checked = 0;
  for (const ws of all) {
    for (const file of new Bun.Glob("**/*.{ts,mjs,js}").scanSync({ cwd: join(root, ws.dir) })) {
      // Tests (beside the code or under test/) share harnesses across workspaces and with the root's test/support;
      // they run only from the checkout, never in the image. Shipped code is what the boundary protects.
      if (
        file.includes(".test.") ||
        file.startsWith("test/") ||
        file.includes("/test/") ||
        file.includes("node_modules/") ||
        file.startsWith("dist/")
      )
        continue;
      checked += 1;
      const path = `${ws.dir}/${file}`;
      for (const spec of allSpecifiers(readFileSync(join(root, path), "utf8"))) {
        const why = boundaryViolation(ws, path, spec, all);
        if (why) violations.push(why);
      }
    }
  }
  expect(checked).toBeGreaterThan(200);
  expect(violations).toEqual([]);
});
