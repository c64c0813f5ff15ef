// Migration entry point of the container image (`bun packages/database/src/migrate-main.ts`, the compose
// `migrate` one-shot, the chart's migration Job): applies pending migrations to DATABASE_URL (with its sslmode and
// DATABASE_TLS_*_FILE, as the services connect) and exits. It lives in this workspace because the image installs
// production dependencies only: `postgres` resolves from here (migrate.ts), not from the repository root.
import { databaseConnectionFromEnv } from "./connection-from-env.ts";
import { migrateDatabase } from "./migrate.ts";

const connection = databaseConnectionFromEnv("migrate", process.env);
if (!connection) process.exit(1);
if (!(await migrateDatabase(connection))) process.exitCode = 1;
