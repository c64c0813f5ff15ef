import type postgres from "postgres";

/**
 * A timestamptz column as ISO 8601 in UTC with milliseconds (`2026-11-22T20:30:15.123Z`), made by PostgreSQL: the
 * form events and API responses carry. Made in SQL, not by the driver, because its Date parsing gives Invalid Date
 * for some early years (e.g. 0018) that partners may send. `column` is SQL text from code (`"l.updated_at"`),
 * never input.
 */
export function isoTimestamp(sql: postgres.Sql, column: string) {
  return sql.unsafe(`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);
}
