// API_WORKERS=2: the real API entry point as a primary with two worker processes sharing the public port.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { uniqueName } from "../../../test/support/env.ts";
import { sample, startApi, type ApiHarness } from "./support/harness.ts";
import { freePort } from "../../../test/support/ports.ts";

let admin: ApiHarness;
beforeAll(async () => {
  // Used for its database handle and partner creation only; the API under test is the spawned one.
  admin = await startApi({ relay: false });
});
afterAll(() => admin.stop());

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Sum of a counter's samples whose labels contain every given pair. */
function counterSum(text: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

test("two workers serve one port; the primary's health port reports both, sums their metrics, and SIGTERM stops them all", async () => {
  const [port, healthPort] = [await freePort(), await freePort()];
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "..", "src", "main.ts")], {
    env: {
      ...process.env,
      API_WORKERS: "2",
      API_PORT: String(port),
      API_HEALTH_PORT: String(healthPort),
      OUTBOX_RELAY_ENABLED: "false",
      LOG_LEVEL: "info",
    },
    stdout: "pipe",
    stderr: "inherit",
  });
  const logLines: string[] = [];
  const reading = (async () => {
    for await (const chunk of proc.stdout)
      logLines.push(...new TextDecoder().decode(chunk).split("\n").filter(Boolean));
  })();
  try {
    const ready = await until("readiness", async () => {
      const r = await fetch(`http://127.0.0.1:${healthPort}/readyz`);
      return r.status === 200 ? ((await r.json()) as { checks: Record<string, string> }) : undefined;
    });
    expect(ready.checks).toEqual({ workers: "ok" });

    const partner = await admin.createPartner();
    const auth = { authorization: `Bearer ${partner.apiKey}`, "content-type": "application/json" };
    const broker = uniqueName("broker");
    expect(
      (
        await fetch(`http://127.0.0.1:${port}/partner/v1/brokers/${broker}`, {
          method: "PUT",
          headers: auth,
          body: JSON.stringify(sample.broker()),
        })
      ).status,
    ).toBe(201);
    // Fresh connections, so the kernel spreads them over both workers.
    const statuses = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        fetch(`http://127.0.0.1:${port}/partner/v1/listings/${uniqueName(`l${i}`)}`, {
          method: "PUT",
          headers: auth,
          body: JSON.stringify(sample.listing(broker)),
          keepalive: false,
        }).then((r) => r.status),
      ),
    );
    expect(statuses.every((s) => s === 201)).toBe(true);
    const [{ n }] =
      (await admin.sql`SELECT count(*)::int AS n FROM listings WHERE partner_id = ${partner.partnerId}`) as unknown as [
        { n: number },
      ];
    expect(n).toBe(40);

    // Each worker logs with its index: both are up behind the one port.
    const workersListening = new Set(
      logLines
        .map((l) => JSON.parse(l))
        .filter((e) => e.msg === "listening" && e.worker !== undefined)
        .map((e) => e.worker),
    );
    expect([...workersListening].sort()).toEqual([0, 1]);

    const metrics = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text();
    // Both workers' counters, summed: exactly the 40 listing PUTs (the route template, not the raw path).
    expect(
      counterSum(metrics, "http_requests_total", { route: "/partner/v1/listings/:externalListingId", status: "201" }),
    ).toBe(40);
    // The public port serves neither probes nor metrics.
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
  } finally {
    proc.kill("SIGTERM");
  }
  expect(await proc.exited).toBe(0);
  await reading;
  const workerPids = logLines
    .map((l) => JSON.parse(l))
    .filter((e) => e.msg === "api worker started")
    .map((e) => e.pid as number);
  expect(workerPids).toHaveLength(2);
  expect(workerPids.some(alive)).toBe(false);
  expect(
    await fetch(`http://127.0.0.1:${port}/partner/v1/health`).then(
      () => "answered",
      () => "closed",
    ),
  ).toBe("closed");
}, 120_000);
