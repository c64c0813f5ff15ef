import { expect, test } from "bun:test";
import { join } from "node:path";

test("with the crash guard installed, an exception thrown from a timer and an unhandled rejection are logged and the process keeps running", async () => {
  const script = `
    import { createLogger, installCrashGuard } from ${JSON.stringify(join(import.meta.dir, "index.ts"))};
    const guard = installCrashGuard(createLogger({ service: "probe" }));
    setTimeout(() => { throw new TypeError("null is not an object (evaluating 'socket.write')"); }, 1);
    setTimeout(() => { Promise.reject(new Error("rejected by a client library")); }, 5);
    // Alive once both were handled, however late a busy machine runs the timers (a fixed delay could come first).
    const started = Date.now();
    const alive = setInterval(() => {
      if (guard.count() < 2 && Date.now() - started < 10000) return;
      clearInterval(alive);
      console.log(JSON.stringify({ msg: "still alive", count: guard.count() }));
    }, 10);
  `;
  const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  expect(code).toBe(0);
  const lines = out
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  expect(lines.map((l) => l.msg)).toEqual([
    "uncaught exception; continuing",
    "unhandled promise rejection; continuing",
    "still alive",
  ]);
  expect(lines[0]).toMatchObject({ level: "error", service: "probe", err: { name: "TypeError" } });
  expect(lines[2].count).toBe(2);
});
