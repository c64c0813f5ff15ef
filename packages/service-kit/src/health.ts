// /healthz answers while the process lives; /readyz runs each dependency check with a short deadline.
import { Elysia } from "elysia";

export type ReadinessCheck = () => Promise<unknown>;

export async function runChecks(checks: Record<string, ReadinessCheck>, timeoutMs = 2000) {
  const results: Record<string, string> = {};
  await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        await Promise.race([
          check(),
          Bun.sleep(timeoutMs).then(() => {
            throw new Error(`no answer within ${timeoutMs} ms`);
          }),
        ]);
        results[name] = "ok";
      } catch (err) {
        results[name] = `failing: ${(err as Error).message}`;
      }
    }),
  );
  const ready = Object.values(results).every((r) => r === "ok");
  return { ready, checks: results };
}

export function createHealthRoutes(opts: { service: string; checks: Record<string, ReadinessCheck>; isStopping?: () => boolean }) {
  return new Elysia({ name: "health" })
    .get("/healthz", () => ({ status: "ok", service: opts.service }))
    .get("/readyz", async ({ set }) => {
      if (opts.isStopping?.()) {
        set.status = 503;
        return { status: "stopping", service: opts.service, checks: {} };
      }
      const { ready, checks } = await runChecks(opts.checks);
      set.status = ready ? 200 : 503;
      return { status: ready ? "ready" : "not ready", service: opts.service, checks };
    });
}

/** A worker's own small HTTP listener for /healthz and /readyz. */
export function startHealthServer(opts: { service: string; port: number; checks: Record<string, ReadinessCheck>; isStopping?: () => boolean }) {
  const app = new Elysia().use(createHealthRoutes(opts)).listen({ port: opts.port, hostname: "0.0.0.0" });
  return { port: app.server!.port, stop: () => app.stop() };
}
