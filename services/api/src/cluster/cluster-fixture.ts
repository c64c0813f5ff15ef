// Test fixture for api-cluster.test.ts: "primary <port> <count>" runs a cluster of "worker <port>" processes,
// each answering HTTP on the shared port with its pid and IPC questions with its pid.
import { createLogger } from "@pss/service-kit";
import { attachWorkerLink, createApiCluster } from "./api-cluster.ts";

const [mode, portText, countText] = process.argv.slice(2);
const port = Number(portText);

if (mode === "worker") {
  const server = Bun.serve({
    port,
    hostname: "127.0.0.1",
    reusePort: true,
    fetch: () => new Response(String(process.pid)),
  });
  attachWorkerLink({
    answer: async (kind) => (kind === "pid" ? process.pid : Promise.reject(new Error(`unknown ${kind}`))),
    onPrimaryGone: () => {
      server.stop(true);
      process.exit(0);
    },
    checkEveryMs: 100,
  });
  process.on("SIGTERM", () => {
    server.stop(true);
    process.exit(0);
  });
} else {
  const cluster = createApiCluster({
    count: Number(countText),
    logger: createLogger({ service: "cluster-fixture", write: () => {} }),
    restartDelayMs: 50,
    spawn: (_index, ipc) =>
      Bun.spawn([process.execPath, import.meta.path, "worker", portText!], {
        ipc,
        stdout: "inherit",
        stderr: "inherit",
      }),
  });
  cluster.start();
  // The test talks to the primary over stdin: "ask" prints the workers' pids.
  for await (const line of console) {
    if (line === "ask") console.log(JSON.stringify(await cluster.ask("pid")));
    if (line === "stop") {
      await cluster.stop();
      console.log("stopped");
      process.exit(0);
    }
  }
}
