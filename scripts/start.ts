// `npm start`: local infrastructure (unless URLs are configured), migrations, then all seven services in the
// foreground, behind one address (API_PORT, 8080) as a balancer puts them in a deployment: scripts/local-balancer.ts
// sends the partner API's paths to the API (on API_BACKEND_PORT, 8079), /portal/ to the partner portal (on PORTAL_PORT,
// 8090; without SMTP_HOST it writes sign-in links to its log) and every other path to the marketplace (on
// MARKETPLACE_PORT, 8088). Image variants go to the S3-compatible server (MEDIA_STORAGE=s3, the scalable path) unless
// MEDIA_STORAGE=local is set, in which case no object store is started. The API, the webhooks service and the portal
// share a WEBHOOK_SECRET_KEY generated once under .data/ unless the environment names one (scripts/local-webhook-key.ts);
// WEBHOOK_ALLOWED_HOSTS and the other variables pass through from the environment. Tracing: the local Zipkin
// (infra/src/zipkin.ts) starts too and every service sends it its spans, unless PSS_ZIPKIN=0 or NODE_ENV=production
// (then only a configured TRACING_ZIPKIN_URL is used); its UI is printed with the other addresses.
// Logs of the services are shown interleaved behind a service prefix. A service that exits is restarted with
// back-off (scripts/supervisor.ts) and the others keep running. Ctrl-C or SIGTERM stops the services
// cleanly; the infrastructure keeps running (`npm run infra -- down` stops it).
import { join } from "node:path";
import postgres from "postgres";
import { migrate } from "@pss/database";
import { defaultPaths, PART_NAMES, up, ZIPKIN_PORT } from "../infra/src/index.ts";
import { RUNTIME_BUN_OPTIONS } from "../packages/http-kit/src/edge.ts";
import { startLocalBalancer } from "./local-balancer.ts";
import { localWebhookKeyEnv } from "./local-webhook-key.ts";
import { createSupervisor } from "./supervisor.ts";

// Each service's health port (/healthz, /readyz, /metrics). The site's one address is API_PORT (default 8080).
const SERVICES = [
  { name: "api", healthPortVar: "API_HEALTH_PORT", defaultPort: 8085 },
  { name: "marketplace", healthPortVar: "MARKETPLACE_HEALTH_PORT", defaultPort: 8089 },
  { name: "media", healthPortVar: "MEDIA_HEALTH_PORT", defaultPort: 8081 },
  { name: "indexer", healthPortVar: "INDEXER_HEALTH_PORT", defaultPort: 8082 },
  { name: "leads", healthPortVar: "LEADS_HEALTH_PORT", defaultPort: 8083 },
  { name: "webhooks", healthPortVar: "WEBHOOKS_HEALTH_PORT", defaultPort: 8086 },
  { name: "portal", healthPortVar: "PORTAL_HEALTH_PORT", defaultPort: 8087 },
] as const;
const apiPort = Number(process.env.API_PORT ?? 8080);
const apiBackendPort = Number(process.env.API_BACKEND_PORT ?? 8079);
const marketplacePort = Number(process.env.MARKETPLACE_PORT ?? 8088);
const portalPort = Number(process.env.PORTAL_PORT ?? 8090);
// Buyer-facing URLs (pages, images, previews) in every answer, page and event: the one address.
const publicBaseUrl = process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${apiPort}`;

const root = new URL("..", import.meta.url).pathname;
// The trace store, on by default in development: PSS_ZIPKIN=0 leaves it out.
const withZipkin =
  !process.env.TRACING_ZIPKIN_URL && process.env.PSS_ZIPKIN !== "0" && process.env.NODE_ENV !== "production";
const urls = await up(process.env, defaultPaths(), withZipkin ? PART_NAMES : undefined);
console.error("start: infrastructure ready");
const sql = postgres(urls.DATABASE_URL, { max: 1, onnotice: () => {} });
const applied = await migrate(sql).finally(() => sql.end());
console.error(applied.length ? `start: applied migrations ${applied.join(", ")}` : "start: schema up to date");

const webhookKey = localWebhookKeyEnv(process.env, join(root, ".data"));

const colors = ["\x1b[36m", "\x1b[96m", "\x1b[35m", "\x1b[33m", "\x1b[32m", "\x1b[34m", "\x1b[31m"];
const useColor = process.stdout.isTTY;
const services = SERVICES.map((svc, i) => ({
  ...svc,
  port: Number(process.env[svc.healthPortVar] ?? svc.defaultPort),
  prefix: useColor ? `${colors[i]}${svc.name.padEnd(11)}|\x1b[0m ` : `${svc.name.padEnd(11)}| `,
}));

async function pipeWithPrefix(stream: ReadableStream<Uint8Array>, prefix: string) {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of stream) {
    buffer += decoder.decode(chunk, { stream: true });
    const lines = buffer.split("\n");
    buffer = lines.pop()!;
    for (const line of lines) process.stdout.write(prefix + line + "\n");
  }
  if (buffer) process.stdout.write(prefix + buffer + "\n");
}

// A service that exits is restarted with back-off (1 s doubling to 30 s) while the others keep running.
const supervisor = createSupervisor({
  services,
  spawn(svc) {
    const proc = Bun.spawn([process.execPath, `services/${svc.name}/src/main.ts`], {
      cwd: root,
      env: {
        ...process.env,
        ...urls,
        MEDIA_STORAGE: process.env.MEDIA_STORAGE ?? "s3",
        ...(svc.name === "api" || svc.name === "webhooks" || svc.name === "portal" ? webhookKey : {}),
        PUBLIC_BASE_URL: publicBaseUrl,
        // The portal is reached through the balancer at /portal/ (PORTAL_URL defaults to PUBLIC_BASE_URL/portal), and
        // answers on its own port too.
        ...(svc.name === "portal" ? { PORTAL_PORT: String(portalPort) } : {}),
        ...(svc.name === "api"
          ? { API_PORT: String(apiBackendPort), API_HEALTH_PORT: String(svc.port) }
          : { HEALTH_PORT: String(svc.port) }),
        ...(svc.name === "marketplace" ? { MARKETPLACE_PORT: String(marketplacePort) } : {}),
        // The local balancer (loopback) is the edge: its X-Forwarded-For is the buyer's (or the portal user's) address.
        ...(svc.name === "marketplace" || svc.name === "portal"
          ? { TRUST_PROXY_CIDRS: process.env.TRUST_PROXY_CIDRS ?? "127.0.0.1/32,::1" }
          : {}),
        ...(svc.name === "api" || svc.name === "marketplace"
          ? { BUN_OPTIONS: [process.env.BUN_OPTIONS, RUNTIME_BUN_OPTIONS].filter(Boolean).join(" ") }
          : {}),
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    for (const stream of [proc.stdout, proc.stderr]) void pipeWithPrefix(stream, svc.prefix);
    return { exited: proc.exited, kill: (signal) => proc.kill(signal) };
  },
  sleep: (ms) => Bun.sleep(ms),
  log: (line) => console.error(line),
});
supervisor.start();
const balancer = startLocalBalancer({
  port: apiPort,
  hostname: "0.0.0.0",
  apiUrl: `http://127.0.0.1:${apiBackendPort}`,
  marketplaceUrl: `http://127.0.0.1:${marketplacePort}`,
  portalUrl: `http://127.0.0.1:${portalPort}`,
});

let stopping = false;
async function stopAll() {
  if (stopping) return;
  stopping = true;
  console.error("start: stopping services");
  balancer.stop(true);
  await supervisor.stop();
  console.error("start: services stopped (the infrastructure keeps running)");
  process.exit(0);
}
process.on("SIGINT", () => void stopAll());
process.on("SIGTERM", () => void stopAll());

// Report once every service answers /readyz.
const deadline = Date.now() + 120_000;
for (const c of services) {
  while (!stopping) {
    const ok = await fetch(`http://127.0.0.1:${c.port}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      console.error(`start: ${c.name} is not ready after 120 s (http://127.0.0.1:${c.port}/readyz)`);
      break;
    }
    await Bun.sleep(250);
  }
}
if (!stopping) {
  const health = services.map((s) => `${s.name} :${s.port}`).join(", ");
  const traces = withZipkin ? `  traces: http://127.0.0.1:${ZIPKIN_PORT}/zipkin/` : "";
  console.error(
    `start: all services ready. Partner API, marketplace and portal (/portal/): http://127.0.0.1:${apiPort}  health and /metrics: ${health}${traces}  (Ctrl-C stops)`,
  );
}
