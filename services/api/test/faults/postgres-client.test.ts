// Regression test for patches/postgres@3.4.9.patch: a reserved connection whose backend dies (PostgreSQL
// stopped or restarted; here the backend is terminated) used to run its next query on a connection without a
// socket, throw from a timer (TypeError: null is not an object (evaluating 'socket.write')) and end the process.
// Runs in a child process without any crash guard, so an uncaught exception shows as a non-zero exit.
import { expect, test } from "bun:test";
import { testUrls } from "../../../../test/support/env.ts";

test("a query on a reserved connection whose backend died rejects with CONNECTION_CLOSED, and the pool keeps working", async () => {
  const script = `
    import postgres from "postgres";
    const sql = postgres(process.env.DATABASE_URL, { max: 2, onnotice: () => {} });
    const admin = postgres(process.env.DATABASE_URL, { max: 1, onnotice: () => {} });
    const conn = await sql.reserve();
    const [{ pid }] = await conn\`SELECT pg_backend_pid() AS pid\`;
    await admin\`SELECT pg_terminate_backend(\${pid})\`;
    await Bun.sleep(200);
    const out = {};
    try { await conn\`SELECT 1\`; out.reserved = "answered"; } catch (e) { out.reserved = e.code ?? e.message; }
    conn.release();
    out.pool = [];
    for (let i = 0; i < 4; i++) out.pool.push((await sql\`SELECT \${i}::int AS i\`)[0].i);
    await sql.end(); await admin.end();
    console.log(JSON.stringify(out));
  `;
  const proc = Bun.spawn([process.execPath, "-e", script], {
    cwd: import.meta.dir,
    env: { ...process.env, DATABASE_URL: testUrls().DATABASE_URL },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  expect(err).not.toContain("socket.write");
  expect(code).toBe(0);
  expect(JSON.parse(out.trim())).toEqual({ reserved: "CONNECTION_CLOSED", pool: [0, 1, 2, 3] });
}, 30_000);
