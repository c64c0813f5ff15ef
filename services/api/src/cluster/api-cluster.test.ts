import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { freePort } from "../../../../test/support/ports.ts";

const FIXTURE = join(import.meta.dir, "cluster-fixture.ts");

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

function startPrimary(port: number, count: number) {
  const proc = Bun.spawn([process.execPath, FIXTURE, "primary", String(port), String(count)], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
  });
  const lines: string[] = [];
  void (async () => {
    let buffered = "";
    for await (const chunk of proc.stdout) {
      buffered += new TextDecoder().decode(chunk);
      const parts = buffered.split("\n");
      buffered = parts.pop()!;
      lines.push(...parts);
    }
  })();
  const command = async (line: string): Promise<string> => {
    const seen = lines.length;
    proc.stdin.write(line + "\n");
    proc.stdin.flush();
    return until(`answer to ${line}`, async () => lines[seen]);
  };
  return { proc, command };
}

const pidsAnswering = async (port: number, requests = 60) => {
  const pids = new Set<number>();
  // Fresh connections each time, so the kernel picks a listener per request.
  await Promise.all(
    Array.from({ length: requests }, async () =>
      pids.add(Number(await (await fetch(`http://127.0.0.1:${port}/`, { keepalive: false })).text())),
    ),
  );
  return pids;
};

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const started: { proc: ReturnType<typeof Bun.spawn> }[] = [];
afterEach(() => {
  for (const s of started.splice(0)) s.proc.kill("SIGKILL");
});

describe("API cluster (API_WORKERS > 1)", () => {
  test("workers share the public port, answer the primary over IPC, and a killed worker is replaced", async () => {
    const port = await freePort();
    const primary = startPrimary(port, 2);
    started.push(primary);
    const workers = await until("two workers answering IPC", async () => {
      const pids = JSON.parse(await primary.command("ask")) as number[];
      return pids.length === 2 ? pids : undefined;
    });
    const answering = await until("both workers serving the port", async () => {
      const pids = await pidsAnswering(port);
      return pids.size === 2 ? pids : undefined;
    });
    expect([...answering].sort()).toEqual([...workers].sort());

    process.kill(workers[0]!, "SIGKILL");
    const replaced = await until("a replacement worker", async () => {
      const pids = JSON.parse(await primary.command("ask")) as number[];
      return pids.length === 2 && !pids.includes(workers[0]!) ? pids : undefined;
    });
    expect(replaced).toContain(workers[1]!);
    expect((await pidsAnswering(port, 20)).has(workers[0]!)).toBe(false);

    expect(await primary.command("stop")).toBe("stopped");
    await primary.proc.exited;
    await until("workers gone", async () => replaced.every((pid) => !alive(pid)));
  });

  test("workers leave by themselves when their primary is killed without stopping them", async () => {
    const port = await freePort();
    const primary = startPrimary(port, 2);
    started.push(primary);
    const workers = await until("two workers", async () => {
      const pids = JSON.parse(await primary.command("ask")) as number[];
      return pids.length === 2 ? pids : undefined;
    });
    primary.proc.kill("SIGKILL");
    await until("orphaned workers to exit", async () => workers.every((pid) => !alive(pid)), 10_000);
    await until(
      "the port to be free",
      async () =>
        (await fetch(`http://127.0.0.1:${port}/`).then(
          () => false,
          () => true,
        )) || undefined,
    );
  });
});
