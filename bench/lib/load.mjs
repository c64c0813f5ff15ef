#!/usr/bin/env node
// The load generator, run by Node as its own process so it never shares the API's event loop.
// Input: one JSON argument; output: one JSON line with throughput and latency.
import autocannon from "autocannon";
import { externalId, listingBody } from "./bodies.mjs";

const spec = JSON.parse(process.argv[2]);
const headers = {
  "content-type": "application/json",
  ...(spec.key ? { authorization: `Bearer ${spec.key}` } : {}),
  ...(spec.userAgent ? { "user-agent": spec.userAgent } : {}),
  ...(spec.cookie ? { cookie: spec.cookie } : {}),
};
let counter = 0;
let itemFailures = 0;
const bodyCache = new Map();

function requestFor() {
  switch (spec.mode) {
    case "get": {
      // `visitors`: that many distinct browsers, in turn, each from an address of its own (X-Forwarded-For: the
      // API runs with TRUST_PROXY), since one address counts only a few visitors per listing and day.
      // `paths`: several pages of one kind (a listing's page for many listings), in turn.
      if (spec.paths) return { method: "GET", path: spec.paths[counter++ % spec.paths.length], headers };
      if (!spec.visitors) return { method: "GET", path: spec.path, headers };
      const n = counter++ % spec.visitors;
      return {
        method: "GET",
        path: spec.path,
        headers: {
          ...headers,
          "user-agent": `${spec.userAgent} v${n}`,
          "x-forwarded-for": `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`,
        },
      };
    }
    case "new": {
      // A fresh external ID every request.
      const n = spec.offset + counter++;
      return {
        method: "PUT",
        path: `/partner/v1/listings/${externalId(spec.prefix, n)}`,
        headers,
        body: JSON.stringify(listingBody(spec.broker, n, spec.bodyOptions)),
      };
    }
    case "update": {
      // Existing IDs, one field changed every time.
      const n = counter++ % spec.existing;
      const body = listingBody(spec.broker, n, spec.bodyOptions);
      body.financials.askingPrice = 100000 + counter;
      return {
        method: "PUT",
        path: `/partner/v1/listings/${externalId(spec.prefix, n)}`,
        headers,
        body: JSON.stringify(body),
      };
    }
    case "repeat": {
      // Existing IDs with exactly what they already hold: no-ops.
      const n = counter++ % spec.existing;
      let body = bodyCache.get(n);
      if (!body) bodyCache.set(n, (body = JSON.stringify(listingBody(spec.broker, n, spec.bodyOptions))));
      return { method: "PUT", path: `/partner/v1/listings/${externalId(spec.prefix, n)}`, headers, body };
    }
    case "feed": {
      // GET /partner/v1/events from a random point of a feed of `existing` events, `pageSize` a page.
      const after = Math.floor(Math.random() * Math.max(1, spec.existing - spec.pageSize));
      return { method: "GET", path: `/partner/v1/events?after=${after}&limit=${spec.pageSize}`, headers };
    }
    case "batch-new": {
      // POST /partner/v1/listings/batch: `batchSize` fresh external IDs per request.
      const items = Array.from({ length: spec.batchSize }, () => {
        const n = spec.offset + counter++;
        return {
          externalListingId: externalId(spec.prefix, n),
          listing: listingBody(spec.broker, n, spec.bodyOptions),
        };
      });
      return { method: "POST", path: "/partner/v1/listings/batch", headers, body: JSON.stringify({ items }) };
    }
    case "batch-update": {
      // The same existing IDs as "update", `batchSize` a request, one field changed every time.
      const items = Array.from({ length: spec.batchSize }, () => {
        const n = counter++ % spec.existing;
        const body = listingBody(spec.broker, n, spec.bodyOptions);
        body.financials.askingPrice = 100000 + counter + (spec.salt ?? 0);
        return { externalListingId: externalId(spec.prefix, n), listing: body };
      });
      return { method: "POST", path: "/partner/v1/listings/batch", headers, body: JSON.stringify({ items }) };
    }
    case "lead": {
      // A buyer's inquiry (public intake, no key), round robin over the given listings.
      const n = counter++;
      const id = spec.listingIds[n % spec.listingIds.length];
      return {
        method: "POST",
        path: `/v1/listings/${id}/leads`,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          name: `Buyer ${n}`,
          email: `buyer${n}@example.com`,
          phone: "+1 512 555 0199",
          message: "Is the seller willing to finance part of the price?",
        }),
      };
    }
    default:
      throw new Error(`unknown mode ${spec.mode}`);
  }
}

const result = await autocannon({
  url: spec.url,
  connections: spec.connections,
  duration: spec.durationSeconds,
  ...(spec.rate ? { overallRate: spec.rate } : {}),
  requests: [
    {
      setupRequest: (req) => ({ ...req, ...requestFor() }),
      // A batch answers 200 whatever its items got: count the items that were not 200/201.
      ...(spec.mode.startsWith("batch")
        ? {
            onResponse: (_status, body) =>
              void (itemFailures += (String(body).match(/"httpStatus":[3-5]/g) ?? []).length),
          }
        : {}),
    },
  ],
});
process.stdout.write(
  JSON.stringify({
    requests: result.requests.total,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    p999: result.latency.p99_9,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    sent: counter,
    itemFailures,
  }) + "\n",
);
