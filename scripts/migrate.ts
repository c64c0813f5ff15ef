// `npm run migrate`: applies pending migrations to DATABASE_URL (or the local infrastructure's database).
import { migrateDatabase } from "@pss/database";
import { up } from "../infra/src/index.ts";

const urls = await up();
if (!(await migrateDatabase(urls.DATABASE_URL))) process.exitCode = 1;
