// `npm start`: local infrastructure (unless URLs are configured), migrations, then all six services in the
// foreground (the partner portal on PORTAL_PORT, 8090, at /portal/; without SMTP_HOST it writes sign-in links to its
// log). Image variants go to the S3-compatible server (MEDIA_STORAGE=s3, the scalable path) unless
// MEDIA_STORAGE=local is set, in which case no object store is started. The API and the webhooks service share a
// WEBHOOK_SECRET_KEY generated once under .data/ unless the environment names one (scripts/local-webhook-key.ts);
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
import { RUNTIME_BUN_OPTIONS } from "../services/api/src/http/edge.ts";
import { localWebhookKeyEnv } from "./local-webhook-key.ts";
import { createSupervisor } from "./supervisor.ts";

// Each service's health port (/healthz, /readyz, /metrics). The API's public port is API_PORT (default 8080).
const SERVICES = [
  { name: "api", healthPortVar: "API_HEALTH_PORT", defaultPort: 8085 },
  { name: "media", healthPortVar: "MEDIA_HEALTH_PORT", defaultPort: 8081 },
  { name: "indexer", healthPortVar: "INDEXER_HEALTH_PORT", defaultPort: 8082 },
  { name: "leads", healthPortVar: "LEADS_HEALTH_PORT", defaultPort: 8083 },
  { name: "webhooks", healthPortVar: "WEBHOOKS_HEALTH_PORT", defaultPort: 8086 },
  { name: "portal", healthPortVar: "PORTAL_HEALTH_PORT", defaultPort: 8087 },
] as const;
const apiPort = Number(process.env.API_PORT ?? 8080);
const portalPort = Number(process.env.PORTAL_PORT ?? 8090);

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

const colors = ["\x1b[36m", "\x1b[35m", "\x1b[33m", "\x1b[32m", "\x1b[34m", "\x1b[31m"];
const useColor = process.stdout.isTTY;
const services = SERVICES.map((svc, i) => ({
  ...svc,
  port: Number(process.env[svc.healthPortVar] ?? svc.defaultPort),
  prefix: useColor ? `${colors[i]}${svc.name.padEnd(8)}|\x1b[0m ` : `${svc.name.padEnd(8)}| `,
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
        // The webhooks service puts buyer-facing URLs in event data: the API's address unless configured.
        ...(svc.name === "webhooks"
          ? { PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${apiPort}` }
          : {}),
        // The portal links to the API's pages and images, and is opened on its own port (no balancer here).
        ...(svc.name === "portal"
          ? {
              PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${apiPort}`,
              PORTAL_PORT: String(portalPort),
              PORTAL_URL: process.env.PORTAL_URL ?? `http://127.0.0.1:${portalPort}/portal`,
            }
          : {}),
        ...(svc.name === "api"
          ? {
              API_PORT: String(apiPort),
              API_HEALTH_PORT: String(svc.port),
              BUN_OPTIONS: [process.env.BUN_OPTIONS, RUNTIME_BUN_OPTIONS].filter(Boolean).join(" "),
            }
          : { HEALTH_PORT: String(svc.port) }),
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

let stopping = false;
async function stopAll() {
  if (stopping) return;
  stopping = true;
  console.error("start: stopping services");
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
    `start: all services ready. API: http://127.0.0.1:${apiPort}  portal: http://127.0.0.1:${portalPort}/portal/  health and /metrics: ${health}${traces}  (Ctrl-C stops)`,
  );
}
