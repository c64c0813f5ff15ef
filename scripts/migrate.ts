// `npm run migrate`: applies pending migrations to DATABASE_URL (or the local infrastructure's database).
import postgres from "postgres";
import { migrate } from "@pss/database";
import { up } from "../infra/src/index.ts";

const urls = await up();
const sql = postgres(urls.DATABASE_URL, { max: 1, onnotice: () => {} });
try {
  const applied = await migrate(sql);
  console.error(applied.length ? `migrate: applied ${applied.join(", ")}` : "migrate: schema up to date");
} catch (err) {
  console.error(`migrate: ${(err as Error).message}`);
  process.exitCode = 1;
} finally {
  await sql.end();
}
