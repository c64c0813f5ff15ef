// The leads service as it runs: `bun services/leads/src/main.ts` as a child process on the real servers.
// SMTP is left unset here: a process replaying the lead topic with forwarding on could e-mail leads that
// concurrent test runs are waiting for. Forwarding is covered by lead-flow.test.ts with the same wiring.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { call, sample, startApi, type ApiHarness } from "../../api/test/support/harness.ts";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import { Topics } from "@pss/contracts";
import { startGroupAtEnd } from "../../media/test/support/media-harness.ts";

const ROOT = join(import.meta.dir, "..", "..", "..");
let api: ApiHarness;

beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.stop());

function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

test("boots, reports ready, counts a lead from Kafka, and stops cleanly on SIGTERM", async () => {
  const urls = testUrls();
  const port = freePort();
  // The groups start at the topic's end: earlier tests leave events (a deliberately malformed one among them,
  // which would be dead-lettered with an error line) that are not this test's business.
  const groupPrefix = uniqueName("leads-main-test");
  for (const group of ["counter", "mailer"])
    await startGroupAtEnd(api.kafka, `${groupPrefix}-${group}`, [Topics.leadEvents.name]);
  const proc = Bun.spawn([process.execPath, "services/leads/src/main.ts"], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      DATABASE_URL: urls.DATABASE_URL,
      KAFKA_BROKERS: urls.KAFKA_BROKERS,
      HEALTH_PORT: String(port),
      LEADS_GROUP_PREFIX: groupPrefix,
      LOG_LEVEL: "info",
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const output = new Response(proc.stdout).text();
  try {
    let ready: { status: number; body: any } | null = null;
    for (let i = 0; i < 200 && ready?.status !== 200; i++) {
      ready = await call(`http://127.0.0.1:${port}`, "GET", "/readyz").catch(() => null);
      if (ready?.status !== 200) await Bun.sleep(100);
    }
    expect([ready?.status, ready?.body]).toEqual([
      200,
      { status: "ready", service: "leads", checks: { postgres: "ok", kafka: "ok", consumers: "ok" } },
    ]);

    const p = await api.createPartner();
    const brokerId = uniqueName("broker");
    await p.put(`/partner/v1/brokers/${brokerId}`, sample.broker());
    const { body: listing } = await p.put(`/partner/v1/listings/${uniqueName("listing")}`, sample.listing(brokerId));
    const { body: lead } = await call(api.marketplaceUrl, "POST", `/v1/listings/${listing.serviceListingId}/leads`, {
      body: { name: "A", email: "a@example.com", message: "Hello" },
    });
    let counted = 0;
    for (let i = 0; i < 300 && counted === 0; i++) {
      counted = (await api.sql`SELECT count(*)::int AS n FROM counted_leads WHERE lead_id = ${lead.leadId}`)[0]!.n;
      if (counted === 0) await Bun.sleep(100);
    }
    expect(counted).toBe(1);
  } finally {
    proc.kill("SIGTERM");
  }
  const code = await Promise.race([proc.exited, Bun.sleep(30_000).then(() => "timeout")]);
  expect(code).toBe(0);
  const logs = await output;
  expect(logs).toContain("lead forwarding is paused");
  expect(logs).toContain('"msg":"stopped"');
  expect(logs).not.toContain('"level":"error"');
});
