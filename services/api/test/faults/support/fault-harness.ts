// Fault tests: real API and indexer processes (spawned as `bun src/main.ts`, exactly as deployed), a paced
// write load from a partner, and a switch to stop one of the shared local servers and bring it back.
// Only the local infrastructure runner's servers can be stopped; elsewhere the tests are skipped.
import { join } from "node:path";
import { Client as OpenSearchClient } from "@opensearch-project/opensearch";
import Redis from "ioredis";
import { Kafka, logLevel } from "kafkajs";
import postgres from "postgres";
import { Topics } from "@pss/contracts";
import { components, defaultPaths, up, type Component } from "../../../../../infra/src/index.ts";
import { startGroupAtEnd } from "../../../../../test/support/consumer-groups.ts";
import { testUrls, uniqueName } from "../../../../../test/support/env.ts";
import { createPartnerAdmin } from "../../../src/admin/partner-admin.ts";
import { endpointOfUrl } from "./gated-proxy.ts";
import { freePort } from "../../../../../test/support/ports.ts";
export { freePort };

const ROOT = join(import.meta.dir, "..", "..", "..", "..", "..");
export type Part = Component["name"];

/** The local runner's component for a part, when the test servers are the runner's (else null: skip). */
export async function localComponent(part: Part): Promise<Component | null> {
  const urls = testUrls() as Record<string, string>;
  const component = components(defaultPaths(ROOT)).find((c) => c.name === part)!;
  if (urls[component.env.name] !== component.env.value) return null;
  return (await component.running()) ? component : null;
}

/**
 * Starts the part again (if it is not running) and waits until it answers, through infra's up(). Only that
 * part: the others are given by URL, so up() leaves them alone even if another run is restarting one of them.
 * Retried for a minute, in case another run on this machine is restarting the same part right now.
 */
export async function restoreInfrastructure(component: Component): Promise<void> {
  const env: Record<string, string | undefined> = {};
  for (const c of components(defaultPaths(ROOT))) if (c.name !== component.name) env[c.env.name] = c.env.value;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await up(env, defaultPaths(ROOT));
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await Bun.sleep(2000);
    }
  }
}

export interface ServiceProcess {
  name: string;
  port: number;
  /** Log lines (JSON) the process wrote. */
  lines: string[];
  /** Exit code, or null while it runs. */
  exitCode(): number | null;
  /** SIGTERM (a graceful shutdown), SIGKILL after 30 s. */
  stop(): Promise<number>;
  /** Sends a signal (SIGKILL by default: the process dies mid-work, as when its host is lost; SIGTERM: a graceful stop) and resolves with the exit code. */
  kill(signal?: "SIGKILL" | "SIGTERM"): Promise<number>;
}

/**
 * Spawns `bun services/<service>/src/main.ts` (or another entry point) and waits until its /healthz answers.
 * `from`: another source tree and its Bun (a previous release, test/upgrades/); this checkout by default.
 */
export async function spawnService(
  service: string,
  env: Record<string, string>,
  port: number,
  script = join("services", service, "src", "main.ts"),
  from: { root: string; bun: string } = { root: ROOT, bun: process.execPath },
): Promise<ServiceProcess> {
  const lines: string[] = [];
  const proc = Bun.spawn([from.bun, join(from.root, script)], {
    cwd: from.root,
    // One API process: its exit code and log lines are the test's evidence. Workers (API_WORKERS > 1) have
    // their own test (services/api/test/api-workers.test.ts).
    env: { ...process.env, LOG_LEVEL: "warn", API_WORKERS: "1", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  let code: number | null = null;
  void proc.exited.then((c) => (code = c));
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    let rest = "";
    for await (const chunk of stream) {
      rest += decoder.decode(chunk, { stream: true });
      const parts = rest.split("\n");
      rest = parts.pop()!;
      lines.push(...parts.filter(Boolean));
    }
    if (rest) lines.push(rest);
  };
  void collect(proc.stdout);
  void collect(proc.stderr);
  const deadline = Date.now() + 30_000;
  while (
    !(await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (code !== null)
      throw new Error(`${service} exited with ${code} during start-up:\n${lines.slice(-20).join("\n")}`);
    if (Date.now() > deadline)
      throw new Error(`${service} did not answer /healthz within 30 s:\n${lines.slice(-20).join("\n")}`);
    await Bun.sleep(100);
  }
  return {
    name: service,
    port,
    lines,
    exitCode: () => code,
    async stop() {
      if (code === null) proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
      const exit = await proc.exited;
      clearTimeout(timer);
      return exit;
    },
    async kill(signal = "SIGKILL") {
      if (code === null) proc.kill(signal);
      return proc.exited;
    },
  };
}

export async function waitUntil<T>(
  what: string,
  check: () => Promise<T | null | undefined | false>,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(200);
  }
}

/** Starts a consumer group at the topics' current end, so it handles this test's events only. */
export const moveGroupToEnd = (
  kafka: Kafka,
  groupId: string,
  topics: string[] = [Topics.listingEvents.name, Topics.brokerEvents.name],
) => startGroupAtEnd(kafka, groupId, topics);

export interface Stack {
  api: ServiceProcess;
  indexer: ServiceProcess | null;
  /** Media and leads processes, when asked for. */
  workers: ServiceProcess[];
  baseUrl: string;
  /** The API's health port: /healthz, /readyz, /metrics. */
  healthUrl: string;
  alias: string;
  apiKey: string;
  partnerId: string;
  /** A valid key no request has used before the outage: authenticating it needs PostgreSQL. */
  coldApiKey: string;
  /** The test's own clients, to check what was stored, published and indexed. */
  sql: postgres.Sql;
  opensearch: OpenSearchClient;
  stop(): Promise<void>;
}

/** A real API process (relay on) and optionally a real indexer process, sharing a fresh alias; a new partner. */
export async function startStack(opts: { indexer: boolean; workers?: boolean }): Promise<Stack> {
  const urls = testUrls();
  const alias = uniqueName("fault-listings");
  const sql = postgres(urls.DATABASE_URL, { max: 4, onnotice: () => {} });
  const redis = new Redis(urls.REDIS_URL, { lazyConnect: true });
  const opensearch = new OpenSearchClient({ node: urls.OPENSEARCH_URL, requestTimeout: 5000 });
  const admin = createPartnerAdmin({ sql, redis });
  const created = await admin.createPartner({ name: uniqueName("fault-partner"), leadTracking: false });
  const cold = await admin.createPartner({ name: uniqueName("fault-partner-cold"), leadTracking: false });
  redis.disconnect();

  let indexer: ServiceProcess | null = null;
  const workers: ServiceProcess[] = [];
  const kafka = new Kafka({
    clientId: uniqueName("fault-test"),
    brokers: urls.KAFKA_BROKERS.split(","),
    logLevel: logLevel.NOTHING,
  });
  const groups = {
    indexer: uniqueName("fault-indexer"),
    media: uniqueName("fault-media"),
    leads: uniqueName("fault-leads"),
  };
  // Each group starts at the topics' end (a few seconds per group: moved in parallel).
  await Promise.all([
    opts.indexer ? moveGroupToEnd(kafka, groups.indexer) : null,
    opts.workers ? moveGroupToEnd(kafka, groups.media) : null,
    ...(opts.workers
      ? ["counter", "mailer"].map((role) => moveGroupToEnd(kafka, `${groups.leads}-${role}`, [Topics.leadEvents.name]))
      : []),
  ]);
  if (opts.indexer) {
    const port = await freePort();
    indexer = await spawnService(
      "indexer",
      { HEALTH_PORT: String(port), OPENSEARCH_INDEX_ALIAS: alias, INDEXER_GROUP_ID: groups.indexer },
      port,
    );
  }
  if (opts.workers) {
    // Listings written by the load have no photos: media has nothing to download. Leads runs without SMTP.
    const mediaPort = await freePort();
    workers.push(
      await spawnService(
        "media",
        {
          HEALTH_PORT: String(mediaPort),
          MEDIA_CONSUMER_GROUP: groups.media,
          MEDIA_DIR: join(ROOT, ".data", "media-test"),
        },
        mediaPort,
      ),
    );
    const leadsPort = await freePort();
    workers.push(
      await spawnService("leads", { HEALTH_PORT: String(leadsPort), LEADS_GROUP_PREFIX: groups.leads }, leadsPort),
    );
  }
  const apiPort = await freePort();
  const apiHealthPort = await freePort();
  const api = await spawnService(
    "api",
    {
      API_PORT: String(apiPort),
      API_HEALTH_PORT: String(apiHealthPort),
      OUTBOX_RELAY_ENABLED: "true",
      OPENSEARCH_INDEX_ALIAS: alias,
      MEDIA_DIR: join(ROOT, ".data", "media-test"),
    },
    apiHealthPort,
  );
  const baseUrl = `http://127.0.0.1:${apiPort}`;
  const healthUrl = `http://127.0.0.1:${apiHealthPort}`;
  await waitUntil("the API to be ready", async () => (await fetch(`${healthUrl}/readyz`)).ok, 30_000);
  return {
    api,
    indexer,
    workers,
    baseUrl,
    healthUrl,
    alias,
    apiKey: created.apiKey,
    partnerId: created.partnerId,
    coldApiKey: cold.apiKey,
    sql,
    opensearch,
    async stop() {
      await api.stop().catch(() => {});
      await indexer?.stop().catch(() => {});
      for (const w of workers) await w.stop().catch(() => {});
      await opensearch.indices.delete({ index: `${alias}-v*` }).catch(() => {});
      await opensearch.close();
      await sql.end({ timeout: 5 });
    },
  };
}

export interface Answer {
  lane: number;
  externalId: string;
  title: string;
  startedAt: number;
  ms: number;
  status: number;
  retryAfter: string | null;
  body: any;
}

export interface Load {
  brokerId: string;
  answers: Answer[];
  stop(): Promise<void>;
}

/**
 * Paced PUT load: `lanes` sequential writers, each sending one listing PUT every `1000 * lanes / perSecond` ms,
 * moving to a new listing every 8 writes (creates and updates). Every answer is recorded with its latency.
 */
export async function startLoad(
  stack: Pick<Stack, "baseUrl" | "apiKey">,
  opts: { perSecond: number; lanes?: number; clientTimeoutMs?: number },
): Promise<Load> {
  const lanes = opts.lanes ?? 4;
  const interval = (1000 * lanes) / opts.perSecond;
  const brokerId = uniqueName("fault-broker");
  const headers = { authorization: `Bearer ${stack.apiKey}`, "content-type": "application/json" };
  const broker = await fetch(`${stack.baseUrl}/partner/v1/brokers/${brokerId}`, {
    method: "PUT",
    headers,
    body: JSON.stringify({ name: "Fault Broker", email: "fault.broker@example.com", licenses: [], serviceAreas: [] }),
  });
  if (broker.status >= 300) throw new Error(`creating the broker answered ${broker.status}: ${await broker.text()}`);

  const answers: Answer[] = [];
  let running = true;
  const prefix = uniqueName("fault");
  const lane = async (n: number) => {
    for (let seq = 0; running; seq++) {
      const began = performance.now();
      const externalId = `${prefix}-l${n}-${Math.floor(seq / 8)}`;
      const title = `lane ${n} write ${seq}`;
      const startedAt = Date.now();
      let status = 0;
      let retryAfter: string | null = null;
      let body: any = null;
      try {
        const res = await fetch(`${stack.baseUrl}/partner/v1/listings/${externalId}`, {
          method: "PUT",
          headers,
          body: JSON.stringify({
            brokerExternalId: brokerId,
            status: "FOR_SALE",
            businessType: "Restaurant",
            title,
            description: "Written by a fault test.",
            location: { city: "Austin", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" },
            photos: [],
          }),
          signal: AbortSignal.timeout(opts.clientTimeoutMs ?? 15_000),
        });
        status = res.status;
        retryAfter = res.headers.get("retry-after");
        const text = await res.text();
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      } catch (err) {
        body = String(err);
      }
      answers.push({ lane: n, externalId, title, startedAt, ms: performance.now() - began, status, retryAfter, body });
      const wait = interval - (performance.now() - began);
      if (wait > 0) await Bun.sleep(wait);
    }
  };
  const loops = Array.from({ length: lanes }, (_, n) => lane(n));
  return {
    brokerId,
    answers,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Stops a part for `outageMs` (measured from when it is down), then starts it again and waits until it answers. */
export interface OutageWindow {
  /** The part had stopped. */
  downAt: number;
  /** Starting it again began (it was down for certain in [downAt, restartAt)). */
  restartAt: number;
  /** It answered again. */
  upAt: number;
}

async function accepts(endpoint: { hostname: string; port: number }): Promise<boolean> {
  try {
    const socket = await Bun.connect({ ...endpoint, socket: { data() {} } });
    socket.end();
    return true;
  } catch {
    return false;
  }
}

/**
 * Polls whether the part accepts connections every 200 ms, so a test judges answers by what the part really
 * was when they were made (another run on the same machine may start the shared server again).
 */
export function watchPart(component: Component): {
  stop(): void;
  wasDownThroughout(from: number, to: number): boolean;
} {
  const endpoint = endpointOfUrl(component.env.value);
  const polls: { at: number; up: boolean }[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const at = Date.now();
      polls.push({ at, up: await accepts(endpoint) });
      await Bun.sleep(200);
    }
  })();
  return {
    stop() {
      running = false;
      void loop;
    },
    wasDownThroughout(from, to) {
      const before = polls.findLast((p) => p.at <= from);
      const after = polls.find((p) => p.at >= to);
      if (!before || !after) return false;
      return polls.filter((p) => p.at >= before.at && p.at <= after.at).every((p) => !p.up);
    },
  };
}

export async function outage(
  component: Component,
  outageMs: number,
  during?: () => Promise<void>,
): Promise<OutageWindow> {
  await component.stop();
  const downAt = Date.now();
  let restartAt = downAt;
  try {
    const watch = during?.();
    await Bun.sleep(outageMs);
    await watch;
  } finally {
    restartAt = Date.now();
    await restoreInfrastructure(component);
  }
  return { downAt, restartAt, upAt: Date.now() };
}

export const acknowledged = (a: Answer) => a.status >= 200 && a.status < 300;

/**
 * What every fault test checks once the stack is back: each listing's stored title is its last acknowledged
 * write or a later attempt; its version counts exactly the writes applied (between the acknowledged and the
 * attempted ones); its outbox holds exactly one event per version; and, with an indexer, the index reached the
 * stored version and holds the stored title.
 */
export async function verifyWrites(
  stack: Stack,
  answers: Answer[],
  opts: { indexed: boolean; timeoutMs?: number },
): Promise<{ listings: number; acknowledged: number }> {
  const byListing = new Map<string, Answer[]>();
  for (const a of answers) byListing.set(a.externalId, [...(byListing.get(a.externalId) ?? []), a]);
  const problems: string[] = [];
  let acked = 0;
  const ids: { id: number; externalId: string }[] = [];
  for (const [externalId, writes] of byListing) {
    const ackedWrites = writes.filter(acknowledged);
    acked += ackedWrites.length;
    const [row] =
      await stack.sql`SELECT id::float8 AS id, title, version FROM listings WHERE partner_id = ${stack.partnerId} AND external_id = ${externalId}`;
    if (!row) {
      if (ackedWrites.length) problems.push(`${externalId}: ${ackedWrites.length} acknowledged writes but no row`);
      continue;
    }
    ids.push({ id: row.id, externalId });
    const lastAcked = ackedWrites.at(-1);
    const candidates = lastAcked
      ? writes.slice(writes.indexOf(lastAcked)).filter((w) => w === lastAcked || !acknowledged(w))
      : writes;
    if (!candidates.some((w) => w.title === row.title))
      problems.push(
        `${externalId}: stored title '${row.title}' is not the last acknowledged one '${lastAcked?.title}' nor a later attempt`,
      );
    if (row.version < ackedWrites.length || row.version > writes.length)
      problems.push(`${externalId}: version ${row.version} outside [${ackedWrites.length}, ${writes.length}]`);
    const events =
      await stack.sql`SELECT (payload->>'version')::int AS v FROM outbox WHERE message_key = ${String(row.id)} AND topic = ${Topics.listingEvents.name} ORDER BY v`;
    const versions = events.map((e) => e.v as number);
    const expected = Array.from({ length: row.version }, (_, i) => i + 1);
    if (JSON.stringify(versions) !== JSON.stringify(expected))
      problems.push(`${externalId}: outbox versions ${JSON.stringify(versions)}, expected ${JSON.stringify(expected)}`);
  }
  if (problems.length) throw new Error(`stored writes do not match the answers:\n${problems.slice(0, 20).join("\n")}`);

  if (opts.indexed) {
    const timeoutMs = opts.timeoutMs ?? 60_000;
    for (const { id, externalId } of ids) {
      const [row] = await stack.sql`SELECT title, version FROM listings WHERE id = ${id}`;
      await waitUntil(
        `${externalId} (listing ${id}) to be indexed at version ${row!.version}`,
        async () => {
          const [state] = await stack.sql`SELECT index_state, indexed_version FROM listings WHERE id = ${id}`;
          if (state!.index_state !== "indexed" || state!.indexed_version !== row!.version) return false;
          const doc = await stack.opensearch.get({ index: stack.alias, id: String(id) });
          return (doc.body as { _source: { title?: string } })._source.title === row!.title;
        },
        timeoutMs,
      );
    }
  }
  return { listings: ids.length, acknowledged: acked };
}

/** One line per second: statuses seen (for a failing run's message, or FAULT_DEBUG=1). */
export function timeline(answers: Answer[], window: OutageWindow): string {
  if (answers.length === 0) return "(no answers)";
  const t0 = answers[0]!.startedAt;
  const rows = new Map<number, Answer[]>();
  for (const a of answers) {
    const s = Math.floor((a.startedAt - t0) / 1000);
    rows.set(s, [...(rows.get(s) ?? []), a]);
  }
  return [...rows]
    .sort(([a], [b]) => a - b)
    .map(([s, list]) => {
      const at = t0 + s * 1000;
      const mark = window.downAt && at >= window.downAt && at < window.restartAt ? "DOWN" : "    ";
      const counts = new Map<string, number>();
      for (const a of list) counts.set(String(a.status), (counts.get(String(a.status)) ?? 0) + 1);
      const max = Math.max(...list.map((a) => a.ms));
      const other = list.find((a) => a.status !== 503 && !acknowledged(a));
      return `${String(s).padStart(3)}s ${mark} ${[...counts].map(([k, v]) => `${k}x${v}`).join(" ")} max ${Math.round(max)} ms${other ? ` e.g. ${JSON.stringify(other.body).slice(0, 160)}` : ""}`;
    })
    .join("\n");
}

export interface Probe {
  path: string;
  status: number;
  ms: number;
  body: string;
}

export interface ScenarioResult {
  answers: Answer[];
  /** Answers to requests made and answered while the part was down for certain (observed, not assumed). */
  whileDown: Answer[];
  window: OutageWindow;
  /** /readyz and /partner/v1/health, asked every 2 s while the part is down. */
  probes: Probe[];
  /** Milliseconds from the part answering again to the first acknowledged write started after that. */
  recoveryMs: number;
}

/**
 * The common shape of a fault test: load for 2 s, stop the part for `outageMs` under load while probing, start
 * it again, wait for a write started after its return to be acknowledged, load 2 s more, stop the load.
 * The shared server is always restarted, also when something throws.
 */
export async function runOutage(
  stack: Stack,
  component: Component,
  opts: { outageMs: number; perSecond: number },
): Promise<ScenarioResult> {
  const load = await startLoad(stack, { perSecond: opts.perSecond });
  const watch = watchPart(component);
  const probes: Probe[] = [];
  let window: OutageWindow = { downAt: 0, restartAt: 0, upAt: 0 };
  let recoveryMs = Number.NaN;
  try {
    await Bun.sleep(2000);
    window = await outage(component, opts.outageMs, async () => {
      for (let i = 0; i < Math.floor(opts.outageMs / 2500); i++) {
        for (const [path, key] of [
          ["/readyz", stack.apiKey],
          ["/partner/v1/health", stack.apiKey],
          ["/partner/v1/health", stack.coldApiKey],
        ] as const) {
          const began = performance.now();
          const res = await fetch((path === "/readyz" ? stack.healthUrl : stack.baseUrl) + path, {
            headers: { authorization: `Bearer ${key}` },
            signal: AbortSignal.timeout(10_000),
          });
          const name = key === stack.coldApiKey ? `${path} (uncached key)` : path;
          probes.push({ path: name, status: res.status, ms: performance.now() - began, body: await res.text() });
        }
        await Bun.sleep(2000);
      }
    });
    const deadline = Date.now() + 20_000;
    for (;;) {
      const ok = load.answers.find((a) => a.startedAt >= window.upAt && acknowledged(a));
      if (ok) {
        recoveryMs = ok.startedAt - window.upAt;
        break;
      }
      if (Date.now() > deadline) break;
      await Bun.sleep(100);
    }
    await Bun.sleep(2000);
  } finally {
    await load.stop();
    watch.stop();
    await restoreInfrastructure(component);
    if (process.env.FAULT_DEBUG)
      console.error(
        `${component.name} outage:\n${timeline(load.answers, window)}\n${stack.api.lines.slice(-20).join("\n")}`,
      );
  }
  const whileDown = load.answers.filter((a) => watch.wasDownThroughout(a.startedAt, a.startedAt + a.ms));
  return { answers: load.answers, whileDown, window, probes, recoveryMs };
}

/** Log lines saying the crash guard caught something: a client library threw where nobody could catch it. */
export const guardLines = (p: ServiceProcess) =>
  p.lines.filter((l) => l.includes("uncaught exception") || l.includes("unhandled promise rejection"));

/** What a Kafka, Redis or OpenSearch outage must leave untouched: the API answers every write with 2xx, fast. */
export function nonDatabaseOutageProblems(result: ScenarioResult, maxMs = 2000): string[] {
  const problems: string[] = [];
  for (const a of result.answers) {
    if (!acknowledged(a))
      problems.push(`${a.status} after ${Math.round(a.ms)} ms: ${JSON.stringify(a.body).slice(0, 200)}`);
    else if (a.ms > maxMs) problems.push(`acknowledged after ${Math.round(a.ms)} ms`);
  }
  return problems;
}

/**
 * What a Kafka, Redis or OpenSearch outage must leave untouched at the probes: readiness needs PostgreSQL only,
 * so at least four /readyz answers, each 200 "ready" within 2 s and without internals, and every health call 200.
 */
export function inServiceProblems(result: ScenarioResult): string[] {
  const problems: string[] = [];
  const ready = result.probes.filter((p) => p.path === "/readyz");
  if (ready.length < 4) problems.push(`only ${ready.length} readiness probes answered`);
  for (const p of ready) {
    if (p.status !== 200) problems.push(`/readyz answered ${p.status}`);
    if (p.ms >= 2000) problems.push(`/readyz took ${Math.round(p.ms)} ms`);
    if (JSON.parse(p.body).status !== "ready") problems.push(`/readyz said ${p.body}`);
    if (/ECONN|refused|127\.0\.0\.1/i.test(p.body)) problems.push(`/readyz showed internals: ${p.body}`);
  }
  for (const p of result.probes.filter((x) => x.path.startsWith("/partner/v1/health"))) {
    if (p.status !== 200) problems.push(`${p.path} answered ${p.status}`);
  }
  return problems;
}
