// The image build runs `bun install --frozen-lockfile`; it stops when a file the install reads was not
// copied in before it (as the kafkajs patch once was not). These cases read the real Dockerfile and
// root package.json, and check the reader itself on small Dockerfiles, the pre-fix one among them.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ignoredByDockerignore, installSteps, missingInstallInputs, requiredInstallInputs } from "./install-inputs.ts";

const root = join(import.meta.dir, "..", "..");
const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
const dockerignore = readFileSync(join(root, ".dockerignore"), "utf8");
const required = requiredInstallInputs(root);

describe("Dockerfile", () => {
  test("the files a frozen install reads include every patch, bunfig.toml and every workspace manifest", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    expect(required).toEqual(
      expect.arrayContaining([
        "package.json",
        "bun.lock",
        "bunfig.toml",
        ...Object.values<string>(manifest.patchedDependencies),
      ]),
    );
    for (const ws of [
      "packages/contracts",
      "packages/service-kit",
      "packages/database",
      "services/api",
      "services/media",
      "services/indexer",
      "services/leads",
      "infra",
    ]) {
      expect(required).toContain(`${ws}/package.json`);
    }
  });

  test("has a bun install step, and every file it reads is copied to its working directory before it runs", () => {
    const result = missingInstallInputs(dockerfile, required, dockerignore);
    expect(result.length).toBeGreaterThan(0);
    for (const step of result)
      expect({ stage: step.stage, missing: step.missing }).toEqual({ stage: step.stage, missing: [] });
  });

  test("installs with --frozen-lockfile, so the image gets exactly the locked versions", () => {
    for (const step of installSteps(dockerfile)) expect(step.line).toContain("--frozen-lockfile");
  });
});

describe("install-input reader", () => {
  const req = [
    "package.json",
    "bun.lock",
    "bunfig.toml",
    "patches/kafkajs@2.2.4.patch",
    "packages/a/package.json",
    "infra/package.json",
  ];

  test("reports the patch missing from the deps stage of the Dockerfile as it was before the fix", () => {
    // The deps stage as it stood: manifests produced by a shell loop in another stage, no patches/.
    const before = `
FROM oven/bun:1.4.5-slim AS base
WORKDIR /app
FROM base AS manifests
WORKDIR /src
COPY packages ./packages
COPY infra ./infra
RUN for f in packages/*/package.json infra/package.json; do cp "$f" "/manifests/$f"; done
FROM base AS deps
ENV BUN_INSTALL_CACHE_DIR=/root/.bun/install/cache
COPY package.json bun.lock bunfig.toml ./
COPY --from=manifests /manifests/ ./
RUN --mount=type=cache,target=/root/.bun/install/cache \\
    bun install --frozen-lockfile --production
`;
    const [deps] = missingInstallInputs(before, req);
    expect(deps!.stage).toBe("deps");
    expect(deps!.missing).toContain("patches/kafkajs@2.2.4.patch");
  });

  test("accepts files, directories and globs copied into the install's working directory", () => {
    const ok = `
FROM oven/bun:1 AS deps
WORKDIR /app
COPY ["package.json", "bun.lock", "./"]
COPY bunfig.toml .
COPY patches ./patches
COPY packages/*/package.json ./packages/a/
COPY infra/package.json infra/
RUN bun install --frozen-lockfile
`;
    expect(missingInstallInputs(ok, req)).toEqual([{ stage: "deps", missing: [] }]);
  });

  test("a file copied after the install, or to another directory, does not count", () => {
    const late = `
FROM oven/bun:1 AS deps
WORKDIR /app
COPY package.json bun.lock bunfig.toml ./
COPY patches /tmp/patches
COPY packages/a/package.json ./packages/a/package.json
RUN bun install --frozen-lockfile
COPY infra/package.json ./infra/
`;
    expect(missingInstallInputs(late, req)).toEqual([
      { stage: "deps", missing: ["patches/kafkajs@2.2.4.patch", "infra/package.json"] },
    ]);
  });

  test("a stage inherits what its parent stage copied, and a WORKDIR change after the copies breaks them", () => {
    const inherited = `
FROM oven/bun:1 AS base
WORKDIR /app
COPY . .
FROM base AS deps
RUN bun install --frozen-lockfile
FROM base AS moved
WORKDIR /elsewhere
RUN bun install --frozen-lockfile
`;
    expect(missingInstallInputs(inherited, req)).toEqual([
      { stage: "deps", missing: [] },
      { stage: "moved", missing: req },
    ]);
  });

  test("files copied from another stage count when that stage copied them from the context", () => {
    const viaStage = `
FROM oven/bun:1 AS files
WORKDIR /src
COPY package.json bun.lock bunfig.toml ./
COPY patches ./patches
COPY packages ./packages
COPY infra ./infra
FROM oven/bun:1 AS deps
WORKDIR /app
COPY --from=files /src/ ./
RUN bun install --frozen-lockfile
`;
    expect(missingInstallInputs(viaStage, req)).toEqual([{ stage: "deps", missing: [] }]);
  });

  test("a file kept out of the build context by .dockerignore is missing even when COPY names it", () => {
    expect(ignoredByDockerignore("patches/kafkajs@2.2.4.patch", "*.patch\n")).toBe(false);
    expect(ignoredByDockerignore("patches/kafkajs@2.2.4.patch", "patches\n")).toBe(true);
    expect(ignoredByDockerignore("patches/kafkajs@2.2.4.patch", "**/*.patch\n!patches/kafkajs@2.2.4.patch\n")).toBe(
      false,
    );
    expect(ignoredByDockerignore("services/api/package.json", "**/node_modules\n")).toBe(false);
    const all = "FROM oven/bun:1\nWORKDIR /app\nCOPY . .\nRUN bun install --frozen-lockfile\n";
    expect(missingInstallInputs(all, req, "patches\n")[0]!.missing).toEqual(["patches/kafkajs@2.2.4.patch"]);
  });
});
