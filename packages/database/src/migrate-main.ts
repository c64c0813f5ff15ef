// Migration entry point of the container image (`bun packages/database/src/migrate-main.ts`, the compose
// `migrate` one-shot): applies pending migrations to DATABASE_URL and exits. It lives in this workspace
// because the image installs production dependencies only: `postgres` resolves from here, not from the
// repository root, whose devDependencies scripts/migrate.ts (the local `npm run migrate`) relies on.
import postgres from "postgres";
import { migrate } from "./migrate.ts";

const url = process.env.DATABASE_URL?.trim();
if (!url) {
  console.error("migrate: DATABASE_URL is required");
  process.exit(1);
}
const sql = postgres(url, { max: 1, onnotice: () => {} });
try {
  const applied = await migrate(sql);
  console.error(applied.length ? `migrate: applied ${applied.join(", ")}` : "migrate: schema up to date");
} catch (err) {
  // Driver messages name host and database, never the password.
  console.error(`migrate: ${(err as Error).message}`);
  process.exitCode = 1;
} finally {
  await sql.end({ timeout: 5 });
}
