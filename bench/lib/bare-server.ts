// Baseline for GET health: a bare Bun.serve answering the same JSON, nothing else.
const port = Number(process.argv[2] ?? 0);
const server = Bun.serve({
  port,
  hostname: "127.0.0.1",
  fetch: () => Response.json({ status: "success", timestamp: new Date().toISOString() }),
});
console.log(JSON.stringify({ port: server.port }));
