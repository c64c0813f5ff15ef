// The migration commands' database connection from their environment: DATABASE_URL with its sslmode and the
// DATABASE_TLS_*_FILE settings, read and applied exactly as the services read them (service-kit), so the migration
// Job and the init containers connect with the TLS the services use. Only the connection: the production checks of
// the services' configuration are theirs.
import { ConfigError, createEnvReader, postgresConnection, readPostgresTls } from "@pss/service-kit";
import type { DatabaseConnection } from "./migrate.ts";

/** The connection, or null after printing the problems (prefixed with `command`). */
export function databaseConnectionFromEnv(
  command: string,
  env: Record<string, string | undefined>,
): DatabaseConnection | null {
  const r = createEnvReader(env);
  const url = r.url("DATABASE_URL", undefined, ["postgres:", "postgresql:"]);
  const { url: clean, tls } = readPostgresTls(r, url);
  try {
    r.done();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`${command}: ${err.message}`);
    return null;
  }
  return postgresConnection({ url: clean, tls });
}
