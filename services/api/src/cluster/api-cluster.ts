// API_WORKERS > 1: a primary process runs N API worker processes that share the public port (SO_REUSEPORT; the
// kernel spreads connections over them), so the API uses every core although each Bun process runs one event
// loop. The primary holds no connections of its own: it restarts a worker that dies, answers the health port
// from its workers (over IPC), and on SIGTERM stops them all gracefully.
import type { Subprocess } from "bun";
import type { Logger } from "@pss/service-kit";

/** A question the primary asks every worker; each worker's answer comes back as `value`. */
export interface WorkerRequest {
  id: number;
  kind: string;
}
export interface WorkerReply {
  id: number;
  value?: unknown;
  error?: string;
}

export interface ApiCluster {
  start(): void;
  /** Asks every live worker; a worker that does not answer within `timeoutMs` is left out. */
  ask(kind: string, timeoutMs?: number): Promise<unknown[]>;
  /** Live workers now. */
  liveWorkers(): number;
  /** SIGTERM to every worker, waits for them (bounded), SIGKILL for the rest. Restarts stop. */
  stop(timeoutMs?: number): Promise<void>;
}

export interface ApiClusterDeps {
  count: number;
  logger: Logger;
  /** Starts worker `index`; the cluster passes the IPC handler to wire into Bun.spawn's `ipc` option. */
  spawn: (index: number, ipc: (message: unknown) => void) => Subprocess;
  /** First restart delay after a worker died; doubles while workers keep dying quickly, up to 30 s. */
  restartDelayMs?: number;
}

interface Slot {
  index: number;
  proc: Subprocess | null;
  startedAt: number;
  delayMs: number;
}

export function createApiCluster(deps: ApiClusterDeps): ApiCluster {
  const log = deps.logger.child({ component: "api-cluster" });
  const initialDelay = deps.restartDelayMs ?? 500;
  const slots: Slot[] = Array.from({ length: deps.count }, (_, index) => ({
    index,
    proc: null,
    startedAt: 0,
    delayMs: initialDelay,
  }));
  const pending = new Map<number, { replies: unknown[]; remaining: number; done: () => void }>();
  let nextId = 1;
  let stopping = false;

  function onMessage(message: unknown) {
    const reply = message as WorkerReply;
    const waiting = typeof reply?.id === "number" ? pending.get(reply.id) : undefined;
    if (!waiting) return;
    if (reply.error === undefined) waiting.replies.push(reply.value);
    if (--waiting.remaining === 0) waiting.done();
  }

  function launch(slot: Slot) {
    if (stopping) return;
    slot.startedAt = Date.now();
    const proc = deps.spawn(slot.index, onMessage);
    slot.proc = proc;
    log.info("api worker started", { worker: slot.index, pid: proc.pid });
    void proc.exited.then((code) => {
      if (slot.proc !== proc) return;
      slot.proc = null;
      if (stopping) return;
      // A worker that lived a while restarts at once; one that keeps dying at boot backs off.
      slot.delayMs = Date.now() - slot.startedAt > 30_000 ? initialDelay : Math.min(slot.delayMs * 2, 30_000);
      log.error("api worker exited; restarting", {
        worker: slot.index,
        code,
        signal: proc.signalCode,
        restartInMs: slot.delayMs,
      });
      setTimeout(() => launch(slot), slot.delayMs);
    });
  }

  return {
    start() {
      for (const slot of slots) launch(slot);
    },
    liveWorkers: () => slots.filter((s) => s.proc !== null).length,
    ask(kind, timeoutMs = 2000) {
      const live = slots.map((s) => s.proc).filter((p): p is Subprocess => p !== null);
      if (live.length === 0) return Promise.resolve([]);
      const id = nextId++;
      return new Promise((resolve) => {
        const entry = { replies: [] as unknown[], remaining: live.length, done: () => {} };
        const timer = setTimeout(() => entry.done(), timeoutMs);
        entry.done = () => {
          clearTimeout(timer);
          pending.delete(id);
          resolve(entry.replies);
        };
        pending.set(id, entry);
        for (const proc of live) {
          try {
            proc.send({ id, kind } satisfies WorkerRequest);
          } catch {
            // Exiting right now: it will not answer.
            if (--entry.remaining === 0) entry.done();
          }
        }
      });
    },
    async stop(timeoutMs = 25_000) {
      stopping = true;
      const live = slots.map((s) => s.proc).filter((p): p is Subprocess => p !== null);
      for (const proc of live) proc.kill("SIGTERM");
      await Promise.race([Promise.all(live.map((p) => p.exited)), Bun.sleep(timeoutMs)]);
      for (const proc of live) if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
    },
  };
}

export interface WorkerLinkDeps {
  /** Answers the primary's questions (e.g. "readiness", "metrics"). */
  answer: (kind: string) => Promise<unknown>;
  /** Called once when the primary is gone (killed without stopping its workers): the worker shuts down. */
  onPrimaryGone: () => void;
  /** How often the worker checks that its primary still lives. */
  checkEveryMs?: number;
}

/** The worker's side: answers over IPC and notices an orphaning (its parent process changed). */
export function attachWorkerLink(deps: WorkerLinkDeps): { detach(): void } {
  const parent = process.ppid;
  const onMessage = (message: unknown) => {
    const request = message as WorkerRequest;
    if (typeof request?.id !== "number" || typeof request.kind !== "string") return;
    deps.answer(request.kind).then(
      (value) => process.send?.({ id: request.id, value } satisfies WorkerReply),
      (err) => process.send?.({ id: request.id, error: (err as Error).message } satisfies WorkerReply),
    );
  };
  process.on("message", onMessage);
  let gone = false;
  const timer = setInterval(() => {
    if (!gone && process.ppid !== parent) {
      gone = true;
      deps.onPrimaryGone();
    }
  }, deps.checkEveryMs ?? 1000);
  timer.unref?.();
  return {
    detach() {
      clearInterval(timer);
      process.off("message", onMessage);
    },
  };
}
