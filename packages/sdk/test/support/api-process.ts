// The real API as a child process (services/api/src/main.ts) on a port of our choosing, so a test can kill
// it and start it again on the same address while a client keeps going. Its outbox relay is off: these
// tests read the database, not Kafka.
import { join } from "node:path";
import Redis from "ioredis";
import postgres from "postgres";
import { createPartnerAdmin } from "../../../../services/api/src/admin/partner-admin.ts";
import { testUrls, uniqueName } from "../../../../test/support/env.ts";

export const ROOT = join(import.meta.dir, "..", "..", "..", "..");

export async function freePort(): Promise<number> {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

/** Polls until the condition holds; fails with `what` after the deadline. */
export async function waitFor(
  what: string,
  condition: () => Promise<boolean> | boolean,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await Bun.sleep(50);
  }
}

export interface ApiProcess {
  url: string;
  port: number;
  /** Requests the API logged ("request" lines: method, path, status), since it first started. */
  requests(): { method: string; path: string; status: number }[];
  /** SIGKILL: the process dies at once, mid-request. */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startApiProcess(env: Record<string, string> = {}): Promise<ApiProcess> {
  const port = await freePort();
  const healthPort = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let proc: ReturnType<typeof Bun.spawn> | null = null;
  const requests: { method: string; path: string; status: number }[] = [];
  const readLog = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const chunk of stream) {
      buffered += decoder.decode(chunk, { stream: true });
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const line of lines) {
        if (!line.includes('"msg":"request"')) continue;
        const entry = JSON.parse(line);
        requests.push({ method: entry.method, path: entry.path, status: entry.status });
      }
    }
  };
  const start = async () => {
    proc = Bun.spawn([process.execPath, join(ROOT, "services/api/src/main.ts")], {
      cwd: ROOT,
      // Info level: one "request" line per request, read back by requests().
      env: {
        ...process.env,
        ...testUrls(),
        API_PORT: String(port),
        API_HEALTH_PORT: String(healthPort),
        API_WORKERS: "1",
        LOG_LEVEL: "info",
        OUTBOX_RELAY_ENABLED: "false",
        MEDIA_DIR: ".data/media-test",
        ...env,
      },
      stdout: "pipe",
      stderr: "inherit",
    });
    void readLog(proc.stdout as ReadableStream<Uint8Array>);
    // Readiness answers on the API's health port, not on the public one.
    await waitFor(`the API on ${url}`, () =>
      fetch(`http://127.0.0.1:${healthPort}/readyz`).then(
        (r) => r.ok,
        () => false,
      ),
    );
  };
  await start();
  return {
    url,
    port,
    requests: () => requests,
    async kill() {
      proc?.kill("SIGKILL");
      await proc?.exited;
    },
    restart: start,
    async stop() {
      proc?.kill("SIGTERM");
      await Promise.race([proc?.exited, Bun.sleep(10_000)]);
      proc?.kill("SIGKILL");
    },
  };
}

export interface TestPartner {
  partnerId: string;
  apiKey: string;
  organizationId: number;
  /** The partner's default office (new brokers belong to it). */
  officeId: number;
}

/** A database client and a fresh partner with a live key, made the way the admin CLI makes them. */
export async function partnerFixture() {
  const urls = testUrls();
  const sql = postgres(urls.DATABASE_URL, { max: 2, onnotice: () => {} });
  const redis = new Redis(urls.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on("error", () => {});
  const admin = createPartnerAdmin({ sql, redis });
  return {
    sql,
    redis,
    async createPartner(opts: { leadTracking?: boolean } = {}): Promise<TestPartner> {
      const p = await admin.createPartner({
        name: uniqueName("sdk-partner"),
        leadTracking: opts.leadTracking ?? false,
      });
      return { partnerId: p.partnerId, apiKey: p.apiKey, organizationId: p.organizationId, officeId: p.officeId };
    },
    async close() {
      redis.disconnect();
      await sql.end({ timeout: 5 });
    },
  };
}
