// /healthz answers while the process lives. /readyz reports cached dependency checks:
// - a check runs at most once per `everyMs` however often probes arrive (single flight), so a probe never opens
//   a connection per call; a required check's refresh is awaited (bounded by its timeout), an optional one is
//   refreshed in the background and its last result reported (its first run is awaited briefly; a result not
//   known yet is left out);
// - only required checks decide readiness; optional ones (a dependency the service can work without) fail as
//   "degraded" information, still 200;
// - the body says "ok"/"failing" per check and nothing else: driver errors never reach the public port.
// /metrics serves the process's Prometheus metrics (metrics.ts) in the text format. Every service serves these
// three on a port of its own (HEALTH_PORT; the API's API_HEALTH_PORT), apart from public traffic.
import { Elysia } from "elysia";
import type { MetricsRenderer } from "./metrics.ts";

export type ReadinessProbe = () => Promise<unknown>;

export interface ReadinessSpec {
  run: ReadinessProbe;
  /** false: a failure is reported as degraded without taking the service out of rotation. Default true. */
  required?: boolean;
  /** Minimum time between two runs; results in between come from the cache. Default 1000 ms. */
  everyMs?: number;
  /** A run that has not answered by then counts as failing. Default 1500 ms. */
  timeoutMs?: number;
}

/** A bare function is a required check with the defaults. */
export type ReadinessCheck = ReadinessProbe | ReadinessSpec;

export type CheckStatus = "ok" | "failing";

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, CheckStatus>;
  /** Optional checks that are failing. */
  degraded: string[];
}

export interface ReadinessMonitor {
  report(): Promise<ReadinessReport>;
}

/** How long a probe waits for an optional check's very first result before answering without it. */
const OPTIONAL_FIRST_RUN_WAIT_MS = 300;

interface CheckState {
  spec: Required<ReadinessSpec>;
  status: CheckStatus | null;
  checkedAt: number;
  inflight: Promise<void> | null;
}

export function createReadinessMonitor(opts: {
  checks: Record<string, ReadinessCheck>;
  now?: () => number;
  /** Sees why a check failed (logged, never answered). */
  onFailure?: (name: string, err: unknown) => void;
  /** A check passed (after failing, a log line says the dependency is back). */
  onSuccess?: (name: string) => void;
}): ReadinessMonitor {
  const now = opts.now ?? Date.now;
  const states = new Map<string, CheckState>();
  for (const [name, check] of Object.entries(opts.checks)) {
    const spec = typeof check === "function" ? { run: check } : check;
    states.set(name, {
      spec: {
        run: spec.run,
        required: spec.required ?? true,
        everyMs: spec.everyMs ?? 1000,
        timeoutMs: spec.timeoutMs ?? 1500,
      },
      status: null,
      checkedAt: -Infinity,
      inflight: null,
    });
  }

  const refresh = (name: string, state: CheckState): Promise<void> => {
    state.inflight ??= (async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        await Promise.race([
          Promise.resolve().then(state.spec.run),
          new Promise((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`no answer within ${state.spec.timeoutMs} ms`)),
              state.spec.timeoutMs,
            );
          }),
        ]);
        state.status = "ok";
        opts.onSuccess?.(name);
      } catch (err) {
        state.status = "failing";
        opts.onFailure?.(name, err);
      } finally {
        clearTimeout(timer);
        state.checkedAt = now();
        state.inflight = null;
      }
    })();
    return state.inflight;
  };

  return {
    async report() {
      const waits: Promise<unknown>[] = [];
      for (const [name, state] of states) {
        if (now() - state.checkedAt < state.spec.everyMs) continue;
        const run = refresh(name, state);
        // Required checks are awaited; an optional one's first run briefly; the rest answer from the cache.
        if (state.spec.required) waits.push(run);
        else if (state.status === null) waits.push(Promise.race([run, Bun.sleep(OPTIONAL_FIRST_RUN_WAIT_MS)]));
      }
      await Promise.all(waits);
      const checks: Record<string, CheckStatus> = {};
      const degraded: string[] = [];
      let ready = true;
      for (const [name, state] of states) {
        if (state.status === null && !state.spec.required) continue;
        const status = state.status ?? "failing";
        checks[name] = status;
        if (status === "ok") continue;
        if (state.spec.required) ready = false;
        else degraded.push(name);
      }
      return { ready, checks, degraded };
    },
  };
}

export interface HealthRoutesOptions {
  service: string;
  checks: Record<string, ReadinessCheck>;
  isStopping?: () => boolean;
  onCheckFailure?: (name: string, err: unknown) => void;
  onCheckSuccess?: (name: string) => void;
  /** Served at GET /metrics when given. */
  metrics?: MetricsRenderer;
}

export function createHealthRoutes(opts: HealthRoutesOptions) {
  const monitor = createReadinessMonitor({
    checks: opts.checks,
    onFailure: opts.onCheckFailure,
    onSuccess: opts.onCheckSuccess,
  });
  const metrics = opts.metrics;
  const app = new Elysia({ name: "health" })
    .get("/healthz", () => ({ status: "ok", service: opts.service }))
    .get("/readyz", async ({ set }) => {
      if (opts.isStopping?.()) {
        set.status = 503;
        return { status: "stopping", service: opts.service, checks: {} };
      }
      const { ready, checks, degraded } = await monitor.report();
      set.status = ready ? 200 : 503;
      return {
        status: ready ? "ready" : "not ready",
        service: opts.service,
        checks,
        ...(degraded.length ? { degraded } : {}),
      };
    });
  if (!metrics) return app;
  return app.get(
    "/metrics",
    async () => new Response(await metrics.render(), { headers: { "content-type": metrics.contentType } }),
  );
}

/** A service's own small HTTP listener for /healthz, /readyz and /metrics. */
export function startHealthServer(opts: HealthRoutesOptions & { port: number; hostname?: string }) {
  const app = new Elysia()
    .use(createHealthRoutes(opts))
    .listen({ port: opts.port, hostname: opts.hostname ?? "0.0.0.0" });
  return { port: app.server!.port, stop: () => app.stop() };
}
