// The examples of docs/sdk.md and docs/sync.md, taken from the documents and run as written against the real
// API (its own process, real PostgreSQL and Redis): each TypeScript example as a program of its own importing
// "@pss/partner-sdk", each terminal session in a shell on a pseudo-terminal (as a partner sees it), with
// `pss-sync` on the PATH. What they print must be what the documents show (support/doc-examples.ts says how
// expected output is written). The examples of a document build on each other, so they run in order against
// one partner.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFeedSequencer, silentLogger, type FeedSequencer } from "@pss/service-kit";
import { recordLeads } from "../../../services/leads/src/counting/count-recorder.ts";
import {
  startMarketplace,
  type MarketplaceHarness,
} from "../../../services/marketplace/test/support/marketplace-harness.ts";
import { partnerFixture, ROOT, startApiProcess, type ApiProcess, type TestPartner } from "./support/api-process.ts";
import { documentBlocks, outputMismatch, screenLines, sessionSteps, type CodeBlock } from "./support/doc-examples.ts";

let api: ApiProcess;
/** Where buyers' inquiries go (the marketplace, in-process on the fixture's clients). */
let marketplace: MarketplaceHarness;
let fx: Awaited<ReturnType<typeof partnerFixture>>;
// The API process runs without its relay (startApiProcess), so the change feed is numbered here, as the relay
// process does beside the relay in a deployment (docs/sdk.md's feed example reads it).
let sequencer: FeedSequencer;
let dir: string;

beforeAll(async () => {
  api = await startApiProcess();
  fx = await partnerFixture();
  marketplace = await startMarketplace({ sql: fx.sql, redis: fx.redis });
  sequencer = createFeedSequencer({ sql: fx.sql, logger: silentLogger }, { retentionDays: 35, idlePollMs: 50 });
  sequencer.start();
  dir = mkdtempSync(join(tmpdir(), "pss-doc-examples-"));
  // The package as an application that installed it sees it (resolved through node_modules, not a path).
  mkdirSync(join(dir, "node_modules", "@pss"), { recursive: true });
  symlinkSync(join(ROOT, "packages/sdk"), join(dir, "node_modules", "@pss", "partner-sdk"));
  // `pss-sync`, as `npm install -g @pss/partner-sdk` or `npx` puts it on the PATH.
  mkdirSync(join(dir, "bin"));
  writeFileSync(
    join(dir, "bin", "pss-sync"),
    `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, "packages/sdk/src/cli/main.ts")}" "$@"\n`,
  );
  chmodSync(join(dir, "bin", "pss-sync"), 0o755);
}, 120_000);
afterAll(async () => {
  await sequencer?.stop();
  await api?.stop();
  await marketplace?.stop();
  await fx?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A clean environment, as on a partner's machine: no server URLs of the test run, only the API's. */
const userEnv = (partner: TestPartner, other?: TestPartner) => ({
  PATH: `${join(dir, "bin")}:${process.env.PATH}`,
  HOME: process.env.HOME ?? dir,
  TERM: "xterm",
  PSS_API_URL: api.url,
  PSS_API_KEY: partner.apiKey,
  // docs/sync.md: a key of another partner, which must not resume from this partner's checkpoint.
  ...(other ? { OTHER_PARTNER_KEY: other.apiKey } : {}),
});

const where = (doc: string, b: CodeBlock) => `${doc}:${b.line}`;

describe("docs/sdk.md", () => {
  const doc = "docs/sdk.md";
  const blocks = documentBlocks(join(ROOT, doc));
  const programs = blocks.flatMap((b, i) =>
    b.lang === "ts" && b.attrs.run ? [{ block: b, output: blocks[i + 1]?.attrs.output ? blocks[i + 1]! : null }] : [],
  );
  let partner: TestPartner;
  beforeAll(async () => {
    partner = await fx.createPartner({ leadTracking: true });
  });

  test("every code block is an example that runs, the output of one, or an install line", () => {
    for (const b of blocks) {
      const kind =
        b.lang === "ts" && b.attrs.run
          ? "program"
          : b.lang === "text" && b.attrs.output
            ? "output"
            : b.lang === "sh" && b.code.startsWith("npm install")
              ? "install"
              : "unknown";
      expect({ block: where(doc, b), kind }).not.toEqual({ block: where(doc, b), kind: "unknown" });
    }
    // Each output block follows the program it belongs to.
    for (const [i, b] of blocks.entries())
      if (b.attrs.output)
        expect({ block: where(doc, b), after: blocks[i - 1]?.attrs.run }).toEqual({
          block: where(doc, b),
          after: true,
        });
    expect(programs.length).toBeGreaterThanOrEqual(7);
  });

  test("the examples compile under strict TypeScript, as a partner's code that imports the package", async () => {
    const tsDir = join(dir, "typecheck");
    mkdirSync(tsDir, { recursive: true });
    for (const [n, { block }] of programs.entries()) writeFileSync(join(tsDir, `example-${n + 1}.ts`), block.code);
    // An application resolving the package the way Bun does (its "bun" export condition: the TypeScript sources).
    const compilerOptions = {
      target: "ES2022",
      module: "Preserve",
      moduleResolution: "bundler",
      customConditions: ["bun"],
      allowImportingTsExtensions: true,
      noEmit: true,
      lib: ["ES2024", "DOM", "DOM.Iterable"],
      types: ["node"],
      typeRoots: [join(ROOT, "packages/sdk/node_modules/@types")],
      strict: true,
      skipLibCheck: true,
    };
    writeFileSync(join(tsDir, "tsconfig.json"), JSON.stringify({ compilerOptions, include: ["*.ts"] }));
    const tsc = Bun.spawn([process.execPath, join(ROOT, "node_modules/typescript/bin/tsc"), "-p", tsDir], {
      cwd: dir,
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, code] = await Promise.all([new Response(tsc.stdout).text(), tsc.exited]);
    expect({ code, out }).toEqual({ code: 0, out: "" });
  }, 180_000);

  for (const [n, { block, output }] of programs.entries()) {
    test(`example ${n + 1} (${where(doc, block)}) runs and prints what the document shows`, async () => {
      // The lead-count example says a buyer has sent an inquiry about the listing: send one, as a buyer does.
      if (block.code.includes("officeLeadCount(")) await sendInquiry(partner, "taqueria-1");
      const file = join(dir, `sdk-example-${n + 1}.ts`);
      writeFileSync(file, block.code);
      const proc = Bun.spawn([process.execPath, file], {
        cwd: dir,
        env: userEnv(partner),
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, stderr, code] = await Promise.all([
        new Response(proc.stdout).text(),
        new Response(proc.stderr).text(),
        proc.exited,
      ]);
      expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
      expect(outputMismatch(output?.code.split("\n") ?? [], stdout.split("\n"))).toBeNull();
    }, 60_000);
  }
});

describe("docs/sync.md", () => {
  const doc = "docs/sync.md";
  const blocks = documentBlocks(join(ROOT, doc));
  let partner: TestPartner;
  let other: TestPartner;
  beforeAll(async () => {
    partner = await fx.createPartner();
    other = await fx.createPartner();
  });

  test("every code block is a terminal session, a feed file it uses, or an install line", () => {
    for (const b of blocks) {
      const kind =
        b.lang === "console"
          ? "session"
          : typeof b.attrs.file === "string"
            ? "file"
            : b.lang === "sh" && b.code.split("\n").every((l) => /^(npx|npm|bunx|export) /.test(l))
              ? "install"
              : "unknown";
      expect({ block: where(doc, b), kind }).not.toEqual({ block: where(doc, b), kind: "unknown" });
    }
    expect(blocks.filter((b) => b.lang === "console").length).toBeGreaterThanOrEqual(6);
  });

  // Feed files are written when the document reaches them (once: a session may change them), so a later block
  // may give a new version of a file.
  const sessions = blocks.flatMap((b, i) =>
    b.lang === "console"
      ? [{ block: b, files: blocks.slice(0, i).filter((f) => typeof f.attrs.file === "string") }]
      : [],
  );
  const written = new Set<CodeBlock>();
  for (const [n, { block, files }] of sessions.entries()) {
    test(`session ${n + 1} (${where(doc, block)}) prints what the document shows`, async () => {
      for (const f of files.filter((f) => !written.has(f))) {
        writeFileSync(join(dir, f.attrs.file as string), `${f.code}\n`);
        written.add(f);
      }
      const steps = sessionSteps(block);
      const script = [
        "stty cols 200 2>/dev/null",
        ...steps.flatMap((s) => [s.command, `__rc=$?; printf '\\n@@step-end\\n'; (exit $__rc)`]),
      ].join("\n");
      writeFileSync(join(dir, "session.sh"), script);
      const proc = Bun.spawn(["script", "-qefc", "bash --noprofile --norc session.sh", "/dev/null"], {
        cwd: dir,
        env: userEnv(partner, other),
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      const [raw] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
      const outputs = raw.split("@@step-end");
      for (const [i, step] of steps.entries()) {
        const mismatch = outputMismatch(step.expected, screenLines(outputs[i] ?? ""));
        expect({ command: step.command, mismatch }).toEqual({ command: step.command, mismatch: null });
      }
    }, 120_000);
  }
});

/**
 * A buyer's inquiry about one of the partner's listings (the public lead form's POST), then counted the way the
 * leads service counts it when the lead.submitted event reaches it (its own code; this test runs no Kafka consumer).
 */
async function sendInquiry(partner: TestPartner, externalListingId: string): Promise<void> {
  const auth = { authorization: `Bearer ${partner.apiKey}` };
  const { listing } = (await fetch(`${api.url}/partner/v1/listings/${externalListingId}`, { headers: auth }).then((r) =>
    r.json(),
  )) as { listing: { serviceListingId: number; brokerExternalId: string } };
  const { broker } = (await fetch(`${api.url}/partner/v1/brokers/${listing.brokerExternalId}`, { headers: auth }).then(
    (r) => r.json(),
  )) as { broker: { serviceBrokerId: string; officeId: number } };
  const res = await fetch(`${marketplace.baseUrl}/v1/listings/${listing.serviceListingId}/leads`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "Sam Buyer", email: "sam.buyer@example.com", message: "Is the lease transferable?" }),
  });
  expect(res.status).toBe(202);
  const { leadId } = (await res.json()) as { leadId: string };
  await recordLeads(fx.sql, [
    {
      leadId,
      serviceListingId: listing.serviceListingId,
      serviceBrokerId: broker.serviceBrokerId,
      officeId: broker.officeId,
      organizationId: partner.organizationId,
      createdAt: new Date().toISOString(),
    },
  ]);
}
