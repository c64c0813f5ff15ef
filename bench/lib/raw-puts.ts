// The raw PUT baseline for bench/sync.ts: the feed's PUTs and nothing else (no validation, no hashing, no
// checkpoint, no report), bodies serialised before the clock starts, `concurrency` requests in flight.
// Runs as its own process, like pss-sync. Prints one JSON line: {seconds, requests, non2xx}.
//   bun bench/lib/raw-puts.ts <feed.ndjson> <api url> <api key> <concurrency>
import { readFileSync } from "node:fs";

const [feedPath, apiUrl, apiKey, concurrencyArg] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
const records = readFileSync(feedPath!, "utf8")
  .split("\n")
  .filter(Boolean)
  .map((line) => JSON.parse(line) as { kind: string; id: string; body: unknown })
  .map((r) => ({
    kind: r.kind,
    url: `${apiUrl}/partner/v1/${r.kind === "broker" ? "brokers" : "listings"}/${encodeURIComponent(r.id)}`,
    body: JSON.stringify(r.body),
  }));

let non2xx = 0;
const statuses: Record<number, number> = {};
async function send(requests: { url: string; body: string }[]) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests.length) {
        const r = requests[next++]!;
        const res = await fetch(r.url, { method: "PUT", headers, body: r.body });
        await res.arrayBuffer();
        if (res.status >= 300) (non2xx += 1), (statuses[res.status] = (statuses[res.status] ?? 0) + 1);
      }
    }),
  );
}

const started = performance.now();
// Brokers first: a listing naming a broker that is not stored yet is refused.
await send(records.filter((r) => r.kind === "broker"));
await send(records.filter((r) => r.kind !== "broker"));
console.log(
  JSON.stringify({ seconds: (performance.now() - started) / 1000, requests: records.length, non2xx, statuses }),
);
