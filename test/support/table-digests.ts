// Every backed-up table's rows as one digest each, to compare a restored database with its source (the backup drill
// in services/api/test/backup-restore.test.ts and the chart's backup and restore Jobs in
// test/kubernetes/chart-production.test.ts). Left out as the backup leaves them out: schema_migrations (restore
// migrates), leader_leases, and the secrets the API makes again (day keys, preview-link secret); and write_xid,
// which a restore stamps anew (services/admin/src/backup/restore.ts).
import { SECRET_TABLES } from "@pss/database/backup";
import type postgres from "postgres";

export type TableDigests = Record<string, { rows: number; md5: string }>;

export async function tableDigests(sql: postgres.Sql): Promise<TableDigests> {
  const tables = await sql<{ name: string }[]>`
    SELECT relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind = 'r'
      AND relname <> ALL (${["schema_migrations", "leader_leases", ...SECRET_TABLES]})
    ORDER BY relname`;
  const out: TableDigests = {};
  for (const { name } of tables) {
    const [d] = await sql<{ rows: number; md5: string }[]>`
      SELECT count(*)::int AS rows, coalesce(md5(string_agg(x, E'\n' ORDER BY x)), '') AS md5
      FROM (SELECT (to_jsonb(t) - 'write_xid')::text AS x FROM ${sql(name)} t) s`;
    out[name] = d!;
  }
  return out;
}
