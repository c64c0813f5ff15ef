// The compose balancer's HAProxy configuration (images/balancer/haproxy.cfg, the part every deployment shares) run
// on this host in front of real API and marketplace processes: the partner API's paths reach the API, every other
// path the marketplace; requests spread over the instances, an instance that stops is
// drained without a failed request, and whatever the balancer refuses itself is answered in the API's JSON error
// shape, never a bare page or a dropped connection. A POST that reached an instance is never sent to another one
// (scripted instances that close without answering), and a client's own X-Forwarded-For changes nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Redis from "ioredis";
import postgres from "postgres";
import { TEST_TOOLS } from "../../../../infra/src/index.ts";
import { testUrls, uniqueName } from "../../../../test/support/env.ts";
import { createPartnerAdmin } from "../../src/admin/partner-admin.ts";
import { freePort, spawnService, waitUntil, type ServiceProcess } from "../faults/support/fault-harness.ts";
import { sample } from "../support/harness.ts";
import { type RawResponse, sendRaw } from "../support/raw-http.ts";

const HAPROXY = TEST_TOOLS.haproxy;
const CONFIG_DIR = join(import.meta.dir, "..", "..", "..", "..", "images", "balancer");
const missing = existsSync(HAPROXY) ? null : "haproxy is not installed (npm test installs Debian's package as root)";

const urls = testUrls();
const sql = postgres(urls.DATABASE_URL, { max: 2, onnotice: () => {} });
const apis: { process: ServiceProcess; port: number; healthPort: number }[] = [];
const marketplaces: { process: ServiceProcess; port: number; healthPort: number }[] = [];
let portal: { process: ServiceProcess; port: number; healthPort: number } | null = null;
let balancerPort = 0;
let balancer: ReturnType<typeof Bun.spawn> | null = null;
let dir = "";
let headers: Record<string, string> = {};

async function startApi() {
  const port = await freePort();
  const healthPort = await freePort();
  const process = await spawnService(
    "api",
    { API_PORT: String(port), API_HEALTH_PORT: String(healthPort), OUTBOX_RELAY_ENABLED: "false" },
    healthPort,
  );
  await waitUntil("the API to be ready", async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`)).ok, 30_000);
  apis.push({ process, port, healthPort });
}

async function startMarketplace() {
  const port = await freePort();
  const healthPort = await freePort();
  const process = await spawnService(
    "marketplace",
    {
      MARKETPLACE_PORT: String(port),
      HEALTH_PORT: String(healthPort),
      // The balancer runs on loopback: it is the trusted proxy.
      TRUST_PROXY_CIDRS: "127.0.0.0/8,::1",
      BUYER_STATS_FLUSH_MS: "200",
      // Other runs on this machine send leads from loopback too: only this test's per-listing counts matter here.
      LEAD_RATE_LIMIT_PER_ADDRESS: "0",
      OPENSEARCH_INDEX_ALIAS: uniqueName("unused-listings"),
    },
    healthPort,
  );
  await waitUntil(
    "the marketplace to be ready",
    async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`)).ok,
    30_000,
  );
  marketplaces.push({ process, port, healthPort });
}

/** The balancer's answer through it, with the instance that served it. */
async function call(path: string, init: RequestInit = {}) {
  const res = await fetch(`http://127.0.0.1:${balancerPort}${path}`, {
    ...init,
    headers: { ...headers, ...init.headers },
  });
  return { status: res.status, instance: res.headers.get("x-pss-instance"), body: await res.json().catch(() => null) };
}

/** The partner portal as a process: the balancer sends /portal/ to it. */
async function startPortal() {
  const port = await freePort();
  const healthPort = await freePort();
  const process = await spawnService(
    "portal",
    { PORTAL_PORT: String(port), HEALTH_PORT: String(healthPort), TRUST_PROXY_CIDRS: "127.0.0.1" },
    healthPort,
  );
  await waitUntil(
    "the portal to be ready",
    async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`)).ok,
    30_000,
  );
  portal = { process, port, healthPort };
}

beforeAll(async () => {
  if (missing) return;
  await Promise.all([startApi(), startMarketplace(), startPortal()]);
  await Promise.all([startApi(), startMarketplace()]);
  const redis = new Redis(urls.REDIS_URL, { lazyConnect: true });
  const partner = await createPartnerAdmin({ sql, redis }).createPartner({
    name: uniqueName("balancer-partner"),
    leadTracking: false,
  });
  redis.disconnect();
  headers = { authorization: `Bearer ${partner.apiKey}`, "content-type": "application/json" };
  // The deployment's part is the backends: these processes, checked on their health ports as compose's are.
  dir = mkdtempSync(join(tmpdir(), "pss-balancer-"));
  const backend = join(dir, "backend.cfg");
  writeFileSync(
    backend,
    [
      "backend api",
      "  balance leastconn",
      ...apis.map((a, i) => `  server api${i + 1} 127.0.0.1:${a.port} check port ${a.healthPort}`),
      "backend marketplace",
      "  balance leastconn",
      ...marketplaces.map((m, i) => `  server marketplace${i + 1} 127.0.0.1:${m.port} check port ${m.healthPort}`),
      "backend portal",
      `  server portal1 127.0.0.1:${portal!.port} check port ${portal!.healthPort}`,
      "",
    ].join("\n"),
  );
  balancerPort = await freePort();
  balancer = Bun.spawn([HAPROXY, "-W", "-db", "-f", join(CONFIG_DIR, "haproxy.cfg"), "-f", backend], {
    env: { ...process.env, PSS_BALANCER_BIND: `127.0.0.1:${balancerPort}` },
    stdout: "ignore",
    stderr: "pipe",
  });
  await waitUntil(
    "both instances in the balancer's rotation",
    async () => {
      const seen = new Set<string | null>();
      for (let i = 0; i < 6; i++) seen.add((await call("/partner/v1/health")).instance);
      for (let i = 0; i < 6; i++) seen.add((await call("/v1/listings/1")).instance);
      return ["api1", "api2", "marketplace1", "marketplace2"].every((name) => seen.has(name));
    },
    20_000,
  );
}, 90_000);

afterAll(async () => {
  balancer?.kill("SIGTERM");
  await balancer?.exited;
  await Promise.all([...apis, ...marketplaces, ...(portal ? [portal] : [])].map((a) => a.process.stop()));
  await sql.end({ timeout: 5 });
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** The API's error shape, with the status the balancer or the API chose: never a bare page. */
function expectJsonError(answer: RawResponse, label: string) {
  expect({ label, status: answer.status, type: answer.headers["content-type"] }).toEqual({
    label,
    status: expect.any(Number),
    type: expect.stringContaining("application/json"),
  });
  expect({ label, status: answer.status! >= 400 }).toEqual({ label, status: true });
  expect({ label, body: answer.json }).toEqual({ label, body: { status: "error", error: expect.any(String) } });
}

describe.skipIf(missing !== null)("the API and the marketplace behind the balancer", () => {
  test("the partner API's paths reach the API, every other path the marketplace", async () => {
    for (const path of ["/partner/v1/health", "/partner/v1/openapi.json", "/docs"])
      expect([path, (await call(path)).instance]).toEqual([path, expect.stringMatching(/^api[12]$/)]);
    for (const path of ["/", "/listings", "/v1/listings/1", "/robots.txt", "/sitemap.xml", "/media/x", "/partner"]) {
      const res = await fetch(`http://127.0.0.1:${balancerPort}${path}`);
      await res.arrayBuffer();
      expect([path, res.headers.get("x-pss-instance")]).toEqual([path, expect.stringMatching(/^marketplace[12]$/)]);
    }
  });

  test("/portal and everything under /portal/ reach the partner portal", async () => {
    const signIn = await fetch(`http://127.0.0.1:${balancerPort}/portal/sign-in`);
    expect(signIn.status).toBe(200);
    expect(signIn.headers.get("x-pss-instance")).toBe("portal1");
    expect(await signIn.text()).toContain("Sign in to the partner portal");
    const root = await fetch(`http://127.0.0.1:${balancerPort}/portal`, { redirect: "manual" });
    expect([root.status, root.headers.get("x-pss-instance")]).toEqual([303, "portal1"]);
    const lookalike = await fetch(`http://127.0.0.1:${balancerPort}/portalx`);
    await lookalike.arrayBuffer();
    expect(lookalike.headers.get("x-pss-instance")).toMatch(/^marketplace[12]$/);
  });

  test("writes through the one published port are spread over the instances, and each is stored once", async () => {
    const brokerId = uniqueName("lb-broker");
    expect(
      (await call(`/partner/v1/brokers/${brokerId}`, { method: "PUT", body: JSON.stringify(sample.broker()) })).status,
    ).toBe(201);
    const served = new Map<string, number>();
    // Concurrent writes: least-connections sends them to both instances.
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(`/partner/v1/listings/${uniqueName(`lb-${i}`)}`, {
          method: "PUT",
          body: JSON.stringify(sample.listing(brokerId)),
        }),
      ),
    );
    for (const a of answers) served.set(a.instance ?? "none", (served.get(a.instance ?? "none") ?? 0) + 1);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 201));
    expect([...served.keys()].sort()).toEqual(["api1", "api2"]);
  }, 60_000);

  test("a client's own X-Forwarded-For through the balancer changes nothing: one client is one address to the views cap and the inquiry limit", async () => {
    const brokerId = uniqueName("lb-xff");
    expect(
      (await call(`/partner/v1/brokers/${brokerId}`, { method: "PUT", body: JSON.stringify(sample.broker()) })).status,
    ).toBe(201);
    const externalId = uniqueName("lb-xff-listing");
    const put = await call(`/partner/v1/listings/${externalId}`, {
      method: "PUT",
      body: JSON.stringify(sample.listing(brokerId)),
    });
    expect(put.status).toBe(201);
    const id = (put.body as { serviceListingId: number }).serviceListingId;
    // 30 page views, each claiming another address and sent as another browser: one address, 3 visitors at most.
    for (let i = 0; i < 30; i++) {
      const res = await fetch(`http://127.0.0.1:${balancerPort}/listings/${id}`, {
        headers: {
          "user-agent": `Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.${i}`,
          "x-forwarded-for": `203.0.113.${i + 1}`,
        },
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const views = async () =>
      ((await call(`/partner/v1/listings/${externalId}/stats`)).body as { totals: { views: number } }).totals.views;
    await waitUntil("the views to be counted", async () => (await views()) > 0, 20_000);
    await Bun.sleep(1500); // both instances flush every 200 ms
    expect(await views()).toBe(3);
    // Inquiries: the per-listing-and-address limit (5 an hour) sees one client, whatever address each claims.
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push(
        (
          await call(`/v1/listings/${id}/leads`, {
            method: "POST",
            headers: { "x-forwarded-for": `198.51.100.${i + 1}` },
            body: JSON.stringify({ name: "Ann Buyer", email: "ann@example.com", message: `Question ${i}` }),
          })
        ).status,
      );
    expect(statuses).toEqual([202, 202, 202, 202, 202, 429]);
  }, 60_000);

  test("what an instance's parser would refuse is answered by the balancer in the JSON error shape", async () => {
    const host = `127.0.0.1:${balancerPort}`;
    const cases: [string, string, number][] = [
      [
        "Content-Length with Transfer-Encoding (the length is dropped, the body read as chunks)",
        `PUT /partner/v1/brokers/x HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
        401,
      ],
      ["no Host", "GET /partner/v1/health HTTP/1.1\r\n\r\n", 400],
      ["a NUL in a header", `GET /partner/v1/health HTTP/1.1\r\nHost: ${host}\r\nX-Note: a\u0000b\r\n\r\n`, 400],
      ["an unknown method", `BREW /partner/v1/health HTTP/1.1\r\nHost: ${host}\r\n\r\n`, 501],
    ];
    for (const [label, request, status] of cases) {
      const answer = await sendRaw(balancerPort, request);
      expectJsonError(answer, label);
      expect({ label, status: answer.status }).toEqual({ label, status });
    }
  }, 60_000);

  test("a request HTTP/1.1 cannot parse is answered 400 by the balancer and never reaches an instance", async () => {
    // HAProxy before 3.2 answers these from its multiplexer with its built-in page, not the errorfile (HAProxy
    // issue 3032): a clear 400 and a closed connection, documented in docs/operations.md.
    const host = `127.0.0.1:${balancerPort}`;
    const cases: [string, string][] = [
      [
        "malformed Content-Length",
        `PUT /partner/v1/brokers/x HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 1x\r\n\r\n{}`,
      ],
      [
        "thousands of headers",
        `GET /partner/v1/health HTTP/1.1\r\nHost: ${host}\r\n${Array.from({ length: 3000 }, (_, i) => `X-H${i}: v\r\n`).join("")}\r\n`,
      ],
      ["a garbled request line", "HELLO\r\n\r\n"],
    ];
    for (const [label, request] of cases) {
      const answer = await sendRaw(balancerPort, request);
      expect({ label, status: answer.status, served: answer.headers["x-pss-instance"] }).toEqual({
        label,
        status: 400,
        served: undefined,
      });
    }
  }, 60_000);

  test("an instance that stops is drained: steady writes through the balancer see no failure", async () => {
    const brokerId = uniqueName("lb-drain");
    await call(`/partner/v1/brokers/${brokerId}`, { method: "PUT", body: JSON.stringify(sample.broker()) });
    const statuses: number[] = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing && i < 2000; i++)
        statuses.push(
          (
            await call(`/partner/v1/listings/${brokerId}-${i}`, {
              method: "PUT",
              body: JSON.stringify(sample.listing(brokerId)),
            })
          ).status,
        );
    })();
    await Bun.sleep(500);
    const stopped = apis[0]!;
    expect(await stopped.process.stop()).toBe(0);
    await Bun.sleep(1500);
    writing = false;
    await writer;
    expect(statuses.length).toBeGreaterThan(10);
    expect(statuses.filter((s) => s !== 201)).toEqual([]);
    expect((await call("/partner/v1/health")).instance).toBe("api2");
  }, 90_000);

  test("with no instance ready, the balancer answers 503 in the JSON shape with Retry-After", async () => {
    await apis[1]!.process.stop();
    await waitUntil(
      "the balancer to see no instance",
      async () => (await call("/partner/v1/health")).status === 503,
      10_000,
    );
    const answer = await sendRaw(balancerPort, `GET /partner/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    expectJsonError(answer, "no instance ready");
    expect(answer.status).toBe(503);
    expect(answer.headers["retry-after"]).toBe("2");
  }, 60_000);
});

describe.skipIf(missing !== null)("what the balancer sends again (issue 37, item 4)", () => {
  test("a POST an instance closed on without answering is not sent to another one (502, JSON); GET and PUT are", async () => {
    // Two instances that read a whole request and close the connection without a word: as an instance that
    // committed a lead and died before answering.
    const arrived: string[] = [];
    const instances = [0, 1].map(() =>
      createServer((socket) => {
        let head = "";
        socket.on("data", (chunk) => {
          head += chunk.toString("latin1");
          const end = head.indexOf("\r\n\r\n");
          const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head.slice(0, end))?.[1] ?? 0);
          if (end >= 0 && head.length >= end + 4 + length) {
            arrived.push(head.slice(0, head.indexOf(" ")));
            socket.end();
          }
        });
        socket.on("error", () => {});
      }),
    );
    const ports = await Promise.all(
      instances.map(
        (server) =>
          new Promise<number>((resolve) =>
            server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
          ),
      ),
    );
    const scripted = mkdtempSync(join(tmpdir(), "pss-balancer-retry-"));
    const backend = join(scripted, "backend.cfg");
    writeFileSync(
      backend,
      // The public inquiry route is the marketplace's; the API's and the portal's backends are there for the
      // configuration to load (haproxy.cfg routes to each).
      [
        "backend api",
        "  balance roundrobin",
        "backend marketplace",
        "  balance roundrobin",
        ...ports.map((p, i) => `  server dying${i} 127.0.0.1:${p}`),
        "backend portal",
        "",
      ].join("\n"),
    );
    const port = await freePort();
    const proxy = Bun.spawn([HAPROXY, "-W", "-db", "-f", join(CONFIG_DIR, "haproxy.cfg"), "-f", backend], {
      env: { ...process.env, PSS_BALANCER_BIND: `127.0.0.1:${port}` },
      stdout: "ignore",
      stderr: "ignore",
    });
    const send = (method: string) =>
      sendRaw(
        port,
        method === "GET"
          ? `GET /v1/listings/1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`
          : `${method} /v1/listings/1/leads HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nIdempotency-Key: k\r\n\r\n{}`,
      );
    try {
      await waitUntil("the balancer to listen", async () => (await send("GET")).status !== null, 10_000);
      const sentTimes: Record<string, number> = {};
      for (const method of ["POST", "GET", "PUT"]) {
        arrived.length = 0;
        const answer = await send(method);
        expectJsonError(answer, method);
        expect([method, answer.status]).toEqual([method, 502]);
        sentTimes[method] = arrived.length;
      }
      // retries 2: an idempotent request reaches up to three instances; a POST exactly one.
      expect(sentTimes).toEqual({ POST: 1, GET: 3, PUT: 3 });
    } finally {
      proxy.kill("SIGTERM");
      await proxy.exited;
      for (const server of instances) server.close();
      rmSync(scripted, { recursive: true, force: true });
    }
  }, 60_000);
});
