// Migration entry point of the container image (`bun packages/database/src/migrate-main.ts`, the compose
// `migrate` one-shot): applies pending migrations to DATABASE_URL and exits. It lives in this workspace
// because the image installs production dependencies only: `postgres` resolves from here (migrate.ts), not
// from the repository root.
import { migrateDatabase } from "./migrate.ts";

const url = process.env.DATABASE_URL?.trim();
if (!url) {
  console.error("migrate: DATABASE_URL is required");
  process.exit(1);
}
if (!(await migrateDatabase(url))) process.exitCode = 1;
