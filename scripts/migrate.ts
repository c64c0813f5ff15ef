// `npm run migrate`: applies pending migrations to DATABASE_URL (or the local infrastructure's database), with
// DATABASE_URL's sslmode and DATABASE_TLS_*_FILE as the services use them.
import { databaseConnectionFromEnv, migrateDatabase } from "@pss/database";
import { up } from "../infra/src/index.ts";

const urls = await up();
const connection = databaseConnectionFromEnv("migrate", { ...process.env, ...urls });
if (!connection || !(await migrateDatabase(connection))) process.exitCode = 1;
