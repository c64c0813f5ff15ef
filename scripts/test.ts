// `npm test`: brings up the real servers (or uses configured URLs), then runs every test with `bun test`.
// Extra arguments go to `bun test` (a path filter, -t pattern, ...).
import { pgbouncerBinary } from "../infra/src/index.ts";
import { RUNTIME_BUN_OPTIONS } from "../services/api/src/http/edge.ts";
import { provideInfrastructure } from "../test/support/infrastructure.ts";
import { createFailureCollector } from "./failure-report.ts";

const started = Date.now();
const { urls, source } = await provideInfrastructure(process.env);
console.error(`test: real servers from ${source} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
// The transaction-pooling tests (test/pgbouncer/) run a private PgBouncer: installed like the other system packages.
const pgbouncer = await pgbouncerBinary({ install: true }).catch((err) => (console.error(`test: could not install pgbouncer: ${(err as Error).message}`), null));
if (!pgbouncer) console.error("test: pgbouncer is not installed (and this user cannot install it): the PgBouncer tests will be skipped");

const proc = Bun.spawn([process.execPath, "test", "--timeout", "60000", ...process.argv.slice(2)], {
  // The same runtime header limit the API is deployed with (services/api/src/http/edge.ts).
  env: { ...process.env, ...urls, PSS_TEST_QUIET: "1", BUN_OPTIONS: [process.env.BUN_OPTIONS, RUNTIME_BUN_OPTIONS].filter(Boolean).join(" ") },
  stdin: "ignore",
  stdout: "inherit",
  stderr: "pipe",
});

// bun test reports on stderr; pass it through and keep the tail to print one plain closing line.
let tail = "";
const decoder = new TextDecoder();
const failures = createFailureCollector();
for await (const chunk of proc.stderr) {
  process.stderr.write(chunk);
  const text = decoder.decode(chunk, { stream: true });
  tail = (tail + text).slice(-4000);
  failures.push(text);
}
const code = await proc.exited;
const passed = Number(/(\d+) pass\b/.exec(tail)?.[1] ?? 0);
const failed = Number(/(\d+) fail\b/.exec(tail)?.[1] ?? 0);
const skipped = Number(/(\d+) skip\b/.exec(tail)?.[1] ?? 0);
// A long run's failures scroll far away from its end: repeat each one's own output (bounded) just before the
// closing line, where CI logs that keep only the tail still show it.
const details = failures.blocks();
if (details.length > 0) console.error(`\nfailures in detail (the output each failing test printed):\n${details.join("\n\n")}`);
console.log(`\ntests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(code !== 0 ? code : passed === 0 ? 1 : 0);
