// `bun packages/database/src/wait-main.ts database|schema [seconds]`: the init containers of the Helm chart
// (deploy/helm/partner-syndication-service). Exits 0 once DATABASE_URL answers (database) or has every migration of
// this image applied (schema); 1 after `seconds` (default 300), and Kubernetes starts it again.
import { databaseConnectionFromEnv } from "./connection-from-env.ts";
import { waitForDatabase } from "./wait.ts";

const target = process.argv[2];
if ((target !== "database" && target !== "schema") || !process.env.DATABASE_URL?.trim()) {
  console.error("usage: DATABASE_URL=... bun packages/database/src/wait-main.ts database|schema [seconds]");
  process.exit(2);
}
// With DATABASE_URL's sslmode and DATABASE_TLS_*_FILE, as the service this init container waits for connects.
const connection = databaseConnectionFromEnv("wait", process.env);
if (!connection) process.exit(1);
const timeoutMs = Number(process.argv[3] ?? 300) * 1000;
const ok = await waitForDatabase(connection, target, { timeoutMs });
console.error(ok ? `wait: ${target} ready` : `wait: ${target} not ready after ${timeoutMs / 1000} s`);
process.exit(ok ? 0 : 1);
