// postgres.js parameter helpers with the one cast they need. postgres.js types `sql.json(v)` as JSONValue and
// `sql(row)` as a row whose every field is a serializable parameter; our typed documents and rows (interfaces
// without index signatures, optional fields, Date values) serialize exactly the same but do not satisfy those
// types. Each helper says what it takes, so the call sites stay typed and cast-free.
import type postgres from "postgres";

/** A client or a transaction: both build parameters the same way. */
type SqlClient = postgres.Sql | postgres.TransactionSql;

/** A JSON(B) parameter: `${sqlJson(sql, doc)}::jsonb` is `${sql.json(doc)}`. */
export function sqlJson(sql: SqlClient, value: unknown): postgres.Parameter {
  return sql.json(value as postgres.JSONValue);
}

/** A row (or rows) for `INSERT INTO t ${sqlValues(sql, rows)}` or `UPDATE t SET ${sqlValues(sql, changes)}`. */
export function sqlValues(sql: SqlClient, rows: object | readonly object[]) {
  // biome-ignore lint/plugin: postgres.js's helper type cannot be met by a typed row; this is the named place for it
  return sql(rows as never);
}
