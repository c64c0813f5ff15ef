// The partner portal's pages for a big partner (issue 42): 100,000 listings, 1,000,000 feed events, 1,000,000 API
// requests in the last 7 days, 100,000 webhook deliveries (bench/lib/portal-seed.ts). Every page is asked for by a
// signed-in browser, a few at a time (4 connections: a team, not a crowd), and its p99 is held to 300 ms. The
// same-run baseline is the sign-in page (the same process, no data read). The query plans of the slowest pages go to
// bench/results/portal-plans.txt (docs/benchmarks.md quotes them).
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { BenchContext } from "../lib/context.ts";
import { seedPortalPartner } from "../lib/portal-seed.ts";
import { freePort, ROOT, runLoad, serviceCommand, waitHttp } from "../lib/processes.ts";
import { round, type Row } from "../lib/result.ts";
import { localWebhookKeyEnv } from "../../scripts/local-webhook-key.ts";

const P99_TARGET_MS = 300;
const CONNECTIONS = 4;

async function startPortalProcess(env: Record<string, string>) {
  const port = await freePort();
  const healthPort = await freePort();
  const proc = Bun.spawn(serviceCommand("services/portal/src/main.ts", "portal"), {
    cwd: ROOT,
    env: {
      ...process.env,
      ...localWebhookKeyEnv(process.env, join(ROOT, ".data")),
      ...env,
      PORTAL_PORT: String(port),
      HEALTH_PORT: String(healthPort),
      LOG_LEVEL: "warn",
    },
    stdout: "ignore",
    stderr: "inherit",
  });
  await waitHttp(`http://127.0.0.1:${healthPort}/readyz`);
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      proc.kill("SIGTERM");
      await Promise.race([proc.exited, Bun.sleep(20_000)]);
      proc.kill("SIGKILL");
    },
  };
}

export async function portalPages(ctx: BenchContext): Promise<Row[]> {
  const seed = await seedPortalPartner(ctx.sql, (line) => console.error(`bench: ${line}`));
  const portal = await startPortalProcess({ ...ctx.urls, PUBLIC_BASE_URL: "https://market.example.com" });
  // The same pages with nothing shared between views: what each view costs when it computes everything itself.
  const uncached = await startPortalProcess({
    ...ctx.urls,
    PUBLIC_BASE_URL: "https://market.example.com",
    PORTAL_OVERVIEW_CACHE_SECONDS: "0",
  });
  const cookie = `pss_portal_session=${seed.sessionToken}`;
  const pages: [string, string[]][] = [
    ["overview", ["/portal/live"]],
    ["listings, newest first", ["/portal/live/listings"]],
    ["listings, one warning (1 in 1,000)", ["/portal/live/listings?warning=POSTAL_CODE_MISMATCH"]],
    ["listings, state FAILED", ["/portal/live/listings?state=FAILED"]],
    ["listings, title search", ["/portal/live/listings?q=laundromat"]],
    ["listings, one broker", seed.brokerIds.map((b) => `/portal/live/listings?broker=${b}`)],
    ["a listing's page", seed.listingIds.map((id) => `/portal/live/listings/${id}`)],
    ["brokers", ["/portal/live/brokers"]],
    ["a broker's page", seed.brokerIds.map((id) => `/portal/live/brokers/${id}`)],
    ["API requests", ["/portal/live/requests"]],
    ["API requests, 4xx", ["/portal/live/requests?class=4xx"]],
    ["API requests, path prefix", ["/portal/live/requests?path=%2Fpartner%2Fv1%2Flistings%2Fbench-portal-listing-7"]],
    ["webhooks", ["/portal/live/webhooks"]],
  ];
  const rows: Row[] = [];
  try {
    // Each page must answer 200 to this session before it is measured (a redirect would measure the sign-in page).
    const measure = async (paths: string[], signedIn = true, url = portal.url) => {
      const session = signedIn ? cookie : undefined;
      const check = await fetch(`${url}${paths[0]}`, { headers: session ? { cookie } : {}, redirect: "manual" });
      if (check.status !== 200) return null;
      const spec = { url, mode: "get" as const, paths, cookie: session, connections: CONNECTIONS };
      await runLoad({ ...spec, durationSeconds: ctx.warmupSeconds });
      return runLoad({ ...spec, durationSeconds: ctx.durationSeconds });
    };
    // The sign-in page of a browser without a session (a signed-in one is sent on to the overview).
    const baseline = await measure(["/portal/sign-in"], false);
    const runs: [string, string[], string][] = [
      ...pages.map(([name, paths]): [string, string[], string] => [name, paths, portal.url]),
      ["overview, figures computed for every view (PORTAL_OVERVIEW_CACHE_SECONDS=0)", ["/portal/live"], uncached.url],
    ];
    for (const [name, paths, url] of runs) {
      const r = await measure(paths, true, url);
      if (!r) {
        rows.push({
          scenario: `portal page: ${name}`,
          figure: NaN,
          unit: "ms p99",
          target: `≤ ${P99_TARGET_MS} ms`,
          pass: null,
          notes: "page not present in this build",
        });
        continue;
      }
      // The overview computed for every view is what the 10 s sharing saves: reported beside the target, not held to it.
      const asDeployed = url === portal.url;
      rows.push({
        scenario: `portal page: ${name}`,
        figure: r.p99,
        unit: "ms p99",
        baseline: baseline?.p99,
        baselineLabel: "sign-in page (no data read), same process",
        ratio: baseline ? round(r.p99 / Math.max(baseline.p99, 0.001), 1) : undefined,
        target: asDeployed ? `≤ ${P99_TARGET_MS} ms` : "reported",
        pass: asDeployed ? r.p99 <= P99_TARGET_MS && r.non2xx === 0 && r.errors === 0 : null,
        notes: `p50 ${r.p50} ms, p99.9 ${r.p999} ms, ${round(r.rps)} pages/s at ${CONNECTIONS} connections; non-2xx ${r.non2xx}`,
      });
    }
    rows.push({
      scenario: "portal benchmark partner",
      figure: seed.seconds,
      unit: seed.seededNow ? "s to seed" : "s to find (seeded before)",
      target: "reported",
      pass: null,
      notes: "100,000 listings, 1,000,000 feed events, 1,000,000 API requests over 7 days, 100,000 webhook deliveries",
    });
    await writePlans(ctx, seed.partnerId);
  } finally {
    await Promise.all([portal.stop(), uncached.stop()]);
  }
  return rows;
}

/** EXPLAIN (ANALYZE, BUFFERS) of the heaviest queries, as the pages run them, for docs/benchmarks.md. */
export async function writePlans(ctx: Pick<BenchContext, "sql">, partnerId: string) {
  const plans: string[] = [];
  const explain = async (title: string, query: string) => {
    const rows = await ctx.sql.unsafe(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${query}`);
    plans.push(`## ${title}\n${rows.map((r) => r["QUERY PLAN"]).join("\n")}\n`);
  };
  const p = `'${partnerId}'::uuid`;
  const today = Math.floor(Date.now() / 86_400_000);
  await explain(
    "overview: one pass over the summaries (every figure but the endpoints and the requests)",
    `SELECT status, state, least(score / 10, 9)::int AS band, warnings, count(*)::int AS n FROM listing_report_summaries WHERE partner_id = ${p} AND mode = 'live' GROUP BY 1, 2, 3, 4`,
  );
  await explain(
    "listings: newest first",
    `SELECT s.listing_id FROM listing_report_summaries s JOIN brokers b ON b.id = s.broker_id WHERE s.partner_id = ${p} AND s.mode = 'live' ORDER BY s.updated_at DESC, s.listing_id DESC LIMIT 51`,
  );
  await explain(
    "listings: one rare warning, newest first",
    `SELECT s.listing_id FROM listing_report_summaries s WHERE s.partner_id = ${p} AND s.mode = 'live' AND s.warnings @> ARRAY['POSTAL_CODE_MISMATCH'] ORDER BY s.updated_at DESC, s.listing_id DESC LIMIT 51`,
  );
  await explain(
    "listings: title search",
    `SELECT s.listing_id FROM listing_report_summaries s WHERE s.partner_id = ${p} AND s.mode = 'live' AND (s.external_id LIKE 'laundromat%' OR s.title ILIKE '%laundromat%') ORDER BY s.updated_at DESC, s.listing_id DESC LIMIT 51`,
  );
  await explain(
    "API requests: 4xx, today's partition (the page reads one day at a time, newest first)",
    `SELECT r.at FROM api_request_log r WHERE r.slot = ${today % 9} AND r.partner_id = ${p} AND r.mode = 'live' AND r.at >= to_timestamp(${today * 86400}) AND r.at < to_timestamp(${(today + 1) * 86400}) AND r.status >= 400 AND r.status < 500 ORDER BY r.at DESC, r.request_id DESC LIMIT 101`,
  );
  await explain(
    "webhooks: the delivery log's first page",
    `SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE d.partner_id = ${p} AND e.partner_id = ${p} AND e.mode = 'live' ORDER BY d.created_at DESC, d.id DESC LIMIT 51`,
  );
  mkdirSync(join(ROOT, "bench", "results"), { recursive: true });
  writeFileSync(join(ROOT, "bench", "results", "portal-plans.txt"), plans.join("\n"));
  console.error(`bench: portal query plans written to bench/results/portal-plans.txt`);
}
