// Preloaded by `bun test` (bunfig.toml): provides real PostgreSQL, Redis, Kafka and OpenSearch, applies
// migrations, and exports the URLs through the environment for every test file.
//
// PSS_TEST_INFRA=none provides nothing: for unit files (pure logic beside the code) that need no server, so
// `PSS_TEST_INFRA=none bun test packages/contracts/src/mode.test.ts` runs in well under a second on a machine
// where no server runs. An integration test run that way fails at once, saying what it lacks (test/support/env.ts).
import postgres from "postgres";
import { migrate } from "@pss/database";
import { TEST_WEBHOOK_SECRET_KEY } from "./support/env.ts";
import { provideInfrastructure } from "./support/infrastructure.ts";

// The API and the webhooks service share this key (encrypting and reading webhook signing secrets). A key file
// from the developer's environment is not the tests' (and the services refuse both at once).
delete process.env.WEBHOOK_SECRET_KEY_FILE;
process.env.WEBHOOK_SECRET_KEY ??= TEST_WEBHOOK_SECRET_KEY;
// Sent outbox rows are kept for an hour (the default deletes them once sent): tests find what their database
// published by its outbox rows (eventsOnTopic, outbox-limits.test.ts), also from the relay and API processes
// they start, which inherit this environment.
process.env.OUTBOX_RETENTION_SECONDS ??= "3600";

if (process.env.PSS_TEST_INFRA !== "none") {
  const { urls, source } = await provideInfrastructure(process.env);
  Object.assign(process.env, urls);
  const sql = postgres(urls.DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    await migrate(sql);
  } finally {
    await sql.end();
  }
  if (process.env.PSS_TEST_QUIET !== "1") console.error(`test setup: real servers from ${source}`);
}
