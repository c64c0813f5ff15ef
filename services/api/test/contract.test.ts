// The contract test: Schemathesis (pinned, from PyPI) reads the API's own OpenAPI document and runs every
// check it has against the real API, with a valid key that has lead tracking. Any failure it reports fails here.
//   PSS_CONTRACT_MAX_EXAMPLES  examples per operation and phase (default 100, the issue's acceptance level)
//   PSS_CONTRACT_PHASES        Schemathesis phases (default examples,coverage,fuzzing,stateful)
//   PSS_CONTRACT_MAX_SECONDS   time budget of the run (default 180; fuzzing and stateful repeat until it is spent)
//   PSS_CONTRACT_SEED          a seed to replay a run (default: a new one each run; the output names it)
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ensureSchemathesis, SCHEMATHESIS_VERSION } from "./support/schemathesis.ts";
import { startApi, type ApiHarness, type Partner } from "./support/harness.ts";

const MAX_EXAMPLES = Number(process.env.PSS_CONTRACT_MAX_EXAMPLES ?? 100);
const PHASES = process.env.PSS_CONTRACT_PHASES ?? "examples,coverage,fuzzing,stateful";
const BROKER_ID = "contract-broker";
// Bounded: Schemathesis's own budget, then a hard stop a little later.
const MAX_SECONDS = Number(process.env.PSS_CONTRACT_MAX_SECONDS ?? 180);

let api: ApiHarness;
let partner: Partner;
let st: string;
beforeAll(async () => {
  // No relay: the contract is the HTTP API; Kafka's state must not slow the run or its shutdown.
  [api, st] = await Promise.all([startApi({ relay: false }), ensureSchemathesis()]);
  partner = await api.createPartner({ leadTracking: true });
  // Generated listings name this broker, so creating them is possible (see schemathesis_hooks.py).
  const broker = await partner.put(`/partner/v1/brokers/${BROKER_ID}`, {
    name: "Contract Broker",
    email: "contract.broker@example.com",
  });
  expect(broker.status).toBe(201);
}, 300_000);
afterAll(() => api?.stop(), 30_000);

test(
  `Schemathesis ${SCHEMATHESIS_VERSION} with all checks finds no failure in the partner and public API`,
  async () => {
    // The JUnit report stays after the run (git-ignored .data/), the place to read a passing run's details.
    const reportDir = join(import.meta.dir, "..", "..", "..", ".data", "reports", "contract");
    rmSync(reportDir, { recursive: true, force: true });
    mkdirSync(reportDir, { recursive: true });
    const args = [
      "run",
      `${api.baseUrl}/partner/v1/openapi.json`,
      "--url",
      api.baseUrl,
      "--checks",
      "all",
      "--max-examples",
      String(MAX_EXAMPLES),
      "--phases",
      PHASES,
      "--max-time",
      String(MAX_SECONDS),
      "--request-timeout",
      "10",
      "--generation-database",
      "none",
      "--no-color",
      "--output-truncate",
      "true",
      "--report",
      "junit",
      "--report-dir",
      reportDir,
      ...(process.env.PSS_CONTRACT_SEED ? ["--seed", process.env.PSS_CONTRACT_SEED] : []),
    ];
    // Asynchronous: the API under test runs in this very process and must keep serving.
    const config = join(import.meta.dir, "contract", "schemathesis.toml");
    const proc = Bun.spawn([st, "--config-file", config, ...args], {
      env: {
        ...process.env,
        SCHEMATHESIS_HOOKS: join(import.meta.dir, "contract", "schemathesis_hooks.py"),
        // The bearer key (schemathesis.toml, [auth.openapi.bearerAuth]).
        PSS_CONTRACT_API_KEY: partner.apiKey,
        CONTRACT_BROKER_ID: BROKER_ID,
        CONTRACT_OFFICE_ID: String(partner.officeId),
        CONTRACT_ORGANIZATION_ID: String(partner.organizationId),
        NO_COLOR: "1",
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    const killer = setTimeout(() => proc.kill(), (MAX_SECONDS + 120) * 1000);
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    clearTimeout(killer);

    // Schemathesis's report ends with a pytest-style banner ("=== … in 180.27s ===") that CI would read as a test
    // runner closing on no test: a passing run prints one line of ours; a failing one every failure with its curl
    // reproduction and the summary, their banners turned into plain rules.
    const command = `st ${args.join(" ")}`;
    if (code === 0) console.error(`contract: ${command}: no failure (JUnit report in ${reportDir})`);
    else
      console.error(
        `contract: ${command}\n${out.slice(Math.max(0, out.indexOf("=== FAILURES"))).replace(/={3,}/g, "---")}${err.trim() ? `\nstderr:\n${err.slice(-4000)}` : ""}`,
      );
    expect(code).toBe(0);
  },
  (MAX_SECONDS + 180) * 1000,
);
