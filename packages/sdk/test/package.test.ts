// The SDK as a release carries it: the tarball `npm run sdk:pack` builds (scripts/sdk-pack.ts), installed into an
// empty project with `npm install ./pss-partner-sdk-<version>.tgz` as docs/sdk.md says (its dependencies from the npm
// registry, nothing from this repository), then used from Node.js (the runtime `npx pss-sync` uses), through npx,
// and type-checked as a TypeScript consumer would.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { lstatSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { packSdk } from "../../../scripts/sdk-pack.ts";
import { startApi, sample, type ApiHarness } from "../../../services/api/test/support/harness.ts";
import { ROOT } from "./support/api-process.ts";

let project: string;
let installed: string;
let tarball: string;
let api: ApiHarness;

async function run(cmd: string[], cwd: string, env: Record<string, string> = {}) {
  const proc = Bun.spawn(cmd, {
    cwd,
    env: { ...process.env, ...env },
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { out, err, code };
}

beforeAll(async () => {
  api = await startApi({ relay: false });
  project = mkdtempSync(join(tmpdir(), "pss-sdk-consumer-"));
  tarball = await packSdk(join(project, "downloads"));
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  // As the documentation says it, from the project's directory; no workspace, no link to this checkout.
  const install = await run(
    ["npm", "install", "--no-audit", "--no-fund", "--prefer-offline", `./downloads/${basename(tarball)}`],
    project,
  );
  expect({ code: install.code, err: install.code === 0 ? "" : install.err }).toEqual({ code: 0, err: "" });
  installed = join(project, "node_modules", "@pss", "partner-sdk");
}, 180_000);
afterAll(async () => {
  await api?.stop();
  rmSync(project, { recursive: true, force: true });
});

test("one command makes a versioned tarball, and npm installs it with its dependencies from the registry", () => {
  const version = JSON.parse(readFileSync(join(ROOT, "packages", "sdk", "package.json"), "utf8")).version;
  expect(basename(tarball)).toBe(`pss-partner-sdk-${version}.tgz`);
  const consumer = JSON.parse(readFileSync(join(project, "package.json"), "utf8"));
  expect(consumer.dependencies["@pss/partner-sdk"]).toBe(`file:downloads/${basename(tarball)}`);
  // Real copies in the project, not links into this checkout.
  for (const dep of ["@pss/partner-sdk", "ajv", "openapi-fetch", "openapi-typescript-helpers"]) {
    const dir = join(project, "node_modules", dep);
    expect([dep, lstatSync(dir).isSymbolicLink(), realpathSync(dir).startsWith(ROOT)]).toEqual([dep, false, false]);
  }
  const lock = JSON.parse(readFileSync(join(project, "package-lock.json"), "utf8"));
  for (const dep of ["ajv", "openapi-fetch"]) expect(lock.packages[`node_modules/${dep}`]).toBeDefined();
});

test("the tarball holds the build, the document and the sources, and no tests", () => {
  const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
  expect(manifest).toMatchObject({
    name: "@pss/partner-sdk",
    bin: { "pss-sync": "./dist/cli/main.js" },
    types: "./dist/index.d.ts",
  });
  for (const dep of Object.values(manifest.dependencies) as string[]) expect(dep).toMatch(/^\d+\.\d+\.\d+$/);
  for (const file of ["dist/index.js", "dist/index.d.ts", "dist/cli/main.js", "openapi.json", "README.md"])
    expect(() => readFileSync(join(installed, file))).not.toThrow();
  expect(readFileSync(join(installed, "dist/cli/main.js"), "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
  expect(() => readFileSync(join(installed, "src/sync/csv.test.ts"))).toThrow();
  expect(() => readFileSync(join(installed, "test/package.test.ts"))).toThrow();
});

test("under Node.js the client writes to the real API and the validator and webhook helper work", async () => {
  const partner = await api.createPartner();
  const script = `
    import { createPartnerClient, createRecordValidator, signWebhook, verifyWebhook, PssApiError } from "@pss/partner-sdk";
    const client = createPartnerClient({ baseUrl: process.env.API, apiKey: process.env.KEY });
    const broker = await client.putBroker("node-b1", ${JSON.stringify(sample.broker())});
    const listing = await client.putListing("node-l1", ${JSON.stringify(sample.listing("node-b1"))});
    const refused = await client.putListing("node-l2", { status: "LIVE" }).catch((e) => e);
    const problems = createRecordValidator().validateBody("listing", { status: "LIVE" });
    const secret = "whsec_" + Buffer.from("0123456789abcdef0123456789abcdef").toString("base64");
    const now = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ type: "ping" });
    const verified = verifyWebhook(secret, { "webhook-id": "m1", "webhook-timestamp": String(now), "webhook-signature": signWebhook(secret, "m1", now, body) }, body);
    console.log(JSON.stringify({ broker: broker.httpStatus, listing: listing.httpStatus, refused: refused instanceof PssApiError ? refused.status : String(refused), problems, verified: verified.payload }));
  `;
  writeFileSync(join(project, "use.mjs"), script);
  const r = await run(["node", "use.mjs"], project, { API: api.baseUrl, KEY: partner.apiKey });
  expect(r.err).toBe("");
  expect(JSON.parse(r.out)).toEqual({
    broker: 201,
    listing: 201,
    refused: 400,
    problems: [{ path: "status", message: expect.stringContaining("must be one of") }],
    verified: { type: "ping" },
  });
});

test("npx -p @pss/partner-sdk pss-sync runs the installed bin under Node.js and syncs a feed", async () => {
  const partner = await api.createPartner();
  const feed = join(project, "feed.ndjson");
  writeFileSync(
    feed,
    [
      { kind: "listing", id: "npx-l1", body: sample.listing("npx-b1") },
      { kind: "broker", id: "npx-b1", body: sample.broker() },
    ]
      .map((l) => JSON.stringify(l))
      .join("\n"),
  );
  // As docs/sync.md runs it: npx names the package, which is installed in the project.
  const r = await run(
    ["npx", "-p", "@pss/partner-sdk", "pss-sync", "feed.ndjson", "--rpm", "0", "--report", "report.ndjson"],
    project,
    { PSS_API_URL: api.baseUrl, PSS_API_KEY: partner.apiKey },
  );
  expect(r.code).toBe(0);
  expect(JSON.parse(r.err.trim().split("\n").at(-1)!)).toMatchObject({ type: "summary", created: 2, failed: 0 });
  const outcomes = readFileSync(join(project, "report.ndjson"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l).outcome);
  expect(outcomes).toEqual(["created", "created"]);
});

test("a TypeScript consumer type-checks against the published declarations", async () => {
  writeFileSync(
    join(project, "consumer.ts"),
    `import { createPartnerClient, PssApiError, verifyWebhook, type ListingBody } from "@pss/partner-sdk";
const client = createPartnerClient({ baseUrl: "https://api.example.com", apiKey: "pss_live_x" });
const body: ListingBody = { status: "FOR_SALE", location: { city: "Austin", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" } };
export async function push(): Promise<number> {
  try {
    const r = await client.putListing("L-1", body);
    const id: number = r.serviceListingId;
    return id;
  } catch (e) {
    if (e instanceof PssApiError) return e.status;
    throw e;
  }
}
export const check = (raw: string, headers: Headers) => verifyWebhook<{ type: string }>("whsec_x", headers, raw).payload.type;
// @ts-expect-error: the document's enum is in the types
export const wrong: ListingBody = { status: "LIVE" };
`,
  );
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2022",
        lib: ["es2022", "dom"],
        strict: true,
        noEmit: true,
        types: [],
      },
      files: ["consumer.ts"],
    }),
  );
  const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
  const r = await run(["node", tsc, "-p", "tsconfig.json"], project);
  expect(r.out + r.err).toBe("");
  expect(r.code).toBe(0);
}, 180_000);
