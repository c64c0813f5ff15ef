// `npm start`: local infrastructure (unless URLs are configured), migrations, then all four services in the
// foreground with their logs interleaved behind a service prefix. Ctrl-C stops the services cleanly;
// the infrastructure keeps running (`npm run infra -- down` stops it).
import postgres from "postgres";
import { migrate } from "@pss/database";
import { up } from "../infra/src/index.ts";

const SERVICES = [
  { name: "api", healthPortVar: "API_PORT", defaultPort: 8080 },
  { name: "media", healthPortVar: "MEDIA_HEALTH_PORT", defaultPort: 8081 },
  { name: "indexer", healthPortVar: "INDEXER_HEALTH_PORT", defaultPort: 8082 },
  { name: "leads", healthPortVar: "LEADS_HEALTH_PORT", defaultPort: 8083 },
] as const;

const root = new URL("..", import.meta.url).pathname;
const urls = await up();
console.error("start: infrastructure ready");
const sql = postgres(urls.DATABASE_URL, { max: 1, onnotice: () => {} });
const applied = await migrate(sql).finally(() => sql.end());
console.error(applied.length ? `start: applied migrations ${applied.join(", ")}` : "start: schema up to date");

const colors = ["\x1b[36m", "\x1b[35m", "\x1b[33m", "\x1b[32m"];
const useColor = process.stdout.isTTY;
const children = SERVICES.map((svc, i) => {
  const port = Number(process.env[svc.healthPortVar] ?? svc.defaultPort);
  const prefix = useColor ? `${colors[i]}${svc.name.padEnd(7)}|\x1b[0m ` : `${svc.name.padEnd(7)}| `;
  const proc = Bun.spawn([process.execPath, `services/${svc.name}/src/main.ts`], {
    cwd: root,
    env: { ...process.env, ...urls, ...(svc.name === "api" ? { API_PORT: String(port) } : { HEALTH_PORT: String(port) }) },
    stdout: "pipe",
    stderr: "pipe",
  });
  for (const stream of [proc.stdout, proc.stderr]) void pipeWithPrefix(stream, prefix);
  return { ...svc, port, proc };
});

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

let stopping = false;
async function stopAll(code: number) {
  if (stopping) return;
  stopping = true;
  console.error("start: stopping services");
  for (const c of children) c.proc.kill("SIGTERM");
  await Promise.race([Promise.all(children.map((c) => c.proc.exited)), Bun.sleep(30_000)]);
  for (const c of children) c.proc.kill("SIGKILL");
  process.exit(code);
}
process.on("SIGINT", () => void stopAll(0));
process.on("SIGTERM", () => void stopAll(0));
for (const c of children) {
  void c.proc.exited.then((code) => {
    if (!stopping) {
      console.error(`start: ${c.name} exited with code ${code}; stopping the others`);
      void stopAll(code || 1);
    }
  });
}

// Report once every service answers /readyz.
const deadline = Date.now() + 120_000;
for (const c of children) {
  while (!stopping) {
    const ok = await fetch(`http://127.0.0.1:${c.port}/readyz`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) {
      console.error(`start: ${c.name} is not ready after 120 s (http://127.0.0.1:${c.port}/readyz)`);
      break;
    }
    await Bun.sleep(250);
  }
}
if (!stopping) {
  console.error(`start: all services ready. API: http://127.0.0.1:${children[0]!.port}  (Ctrl-C stops)`);
}
