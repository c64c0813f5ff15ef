import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { Topics } from "@pss/contracts";
import { uniqueName } from "../../../test/support/env.ts";
import { eventsOnTopic, waitForOutboxDrained } from "./support/events.ts";
import { sample, startApi, type ApiHarness } from "./support/harness.ts";

let api: ApiHarness;
beforeAll(async () => {
  // An API with its relay off: only the relay-only process can publish what it writes.
  api = await startApi({ relay: false });
});
afterAll(() => api.stop());

async function freePort() {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

test("the relay-only process publishes what API instances without a relay write, and stops cleanly on SIGTERM", async () => {
  const port = await freePort();
  const relay = Bun.spawn([process.execPath, join(import.meta.dir, "..", "src", "relay-main.ts")], {
    env: { ...process.env, HEALTH_PORT: String(port), LOG_LEVEL: "warn" },
    stdout: "ignore",
    stderr: "pipe",
  });
  try {
    const deadline = Date.now() + 30_000;
    while (
      !(await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (Date.now() > deadline) throw new Error("relay process not ready");
      await Bun.sleep(100);
    }
    const partner = await api.createPartner();
    const broker = uniqueName("broker");
    await partner.put(`/partner/v1/brokers/${broker}`, sample.broker());
    const { body } = await partner.put(`/partner/v1/listings/${uniqueName("listing")}`, sample.listing(broker));
    const aggregateId = String(body.serviceListingId);
    await waitForOutboxDrained(api.sql, aggregateId, 30_000);
    const events = await eventsOnTopic(api.kafka, api.sql, Topics.listingEvents.name, aggregateId);
    expect(events.map((e) => [e.version, e.payload.listingId])).toEqual([[1, body.serviceListingId]]);
  } finally {
    relay.kill("SIGTERM");
  }
  expect(await relay.exited).toBe(0);
}, 90_000);
