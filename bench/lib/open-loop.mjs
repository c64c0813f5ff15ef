#!/usr/bin/env node
// Open-loop load: requests ARRIVE at a fixed rate whatever the server does, like partners' feeds do, and each
// latency is measured from the moment its request was due, not from when a free connection sent it. So a
// stall shows up as the queue it causes (no coordinated omission).
// Why not autocannon's overallRate: it gives each connection a quota per second and sends that quota
// back-to-back at the start of every second, i.e. short bursts at full saturation, which is a closed loop.
// Input: one JSON argument; output: one JSON line.
import http from "node:http";
import { externalId, listingBody } from "./bodies.mjs";

const spec = JSON.parse(process.argv[2]);
const target = new URL(spec.url);
const agent = new http.Agent({ keepAlive: true, maxSockets: spec.maxConnections ?? 256 });
const headers = { "content-type": "application/json", ...(spec.key ? { authorization: `Bearer ${spec.key}` } : {}) };

let counter = 0;
function requestFor() {
  const n = counter++;
  if (spec.mode === "new") {
    return {
      path: `/partner/v1/listings/${externalId(spec.prefix, spec.offset + n)}`,
      body: JSON.stringify(listingBody(spec.broker, spec.offset + n, spec.bodyOptions)),
    };
  }
  if (spec.mode === "update") {
    const i = n % spec.existing;
    const body = listingBody(spec.broker, i, spec.bodyOptions);
    body.financials.askingPrice = 100000 + n + 1 + (spec.salt ?? 0);
    return { path: `/partner/v1/listings/${externalId(spec.prefix, i)}`, body: JSON.stringify(body) };
  }
  throw new Error(`unknown mode ${spec.mode}`);
}

const latencies = [];
/** spec.traceSlowMs: every request slower than that, as [epoch ms it was due, latency ms], to correlate stalls. */
const slow = [];
let non2xx = 0;
let errors = 0;
let inFlight = 0;
let maxInFlight = 0;

function send(dueAt) {
  const { path, body } = requestFor();
  inFlight++;
  maxInFlight = Math.max(maxInFlight, inFlight);
  const req = http.request(
    {
      host: target.hostname,
      port: target.port,
      method: "PUT",
      path,
      agent,
      headers: { ...headers, "content-length": Buffer.byteLength(body) },
    },
    (res) => {
      res.resume();
      res.on("end", () => {
        inFlight--;
        const latency = performance.now() - dueAt;
        latencies.push(latency);
        if (spec.traceSlowMs !== undefined && latency > spec.traceSlowMs)
          slow.push([Math.round(performance.timeOrigin + dueAt), Math.round(latency * 10) / 10]);
        if (res.statusCode < 200 || res.statusCode > 299) non2xx++;
      });
    },
  );
  req.setTimeout(30_000, () => req.destroy(new Error("timeout")));
  req.on("error", () => {
    inFlight--;
    errors++;
  });
  req.end(body);
}

// Due times at exact 1/rate intervals; a 1 ms tick sends whatever has come due (at most a tick late, and the
// latency still counts from the due time).
const interval = 1000 / spec.rate;
const began = performance.now();
const end = began + spec.durationSeconds * 1000;
let nextDue = began;
await new Promise((resolve) => {
  const tick = setInterval(() => {
    const now = performance.now();
    while (nextDue <= now && nextDue < end) {
      send(nextDue);
      nextDue += interval;
    }
    if (nextDue >= end) {
      clearInterval(tick);
      resolve();
    }
  }, 1);
});
// Wait for the stragglers (bounded).
const drainDeadline = performance.now() + 30_000;
while (inFlight > 0 && performance.now() < drainDeadline) await new Promise((r) => setTimeout(r, 10));
agent.destroy();

latencies.sort((a, b) => a - b);
const at = (q) =>
  Math.round((latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))] ?? 0) * 10) / 10;
process.stdout.write(
  JSON.stringify({
    requests: latencies.length,
    rps: latencies.length / spec.durationSeconds,
    p50: at(0.5),
    p99: at(0.99),
    p999: at(0.999),
    errors: errors + Math.max(inFlight, 0),
    non2xx,
    sent: counter,
    maxInFlight,
    ...(spec.traceSlowMs !== undefined ? { slow } : {}),
  }) + "\n",
);
