// What a partner reads (the guide, the reference, the API changelog) speaks of the API, never of how it is built:
// no server, table, source path, migration or operator setting. Those live in docs/api-internals.md and the
// operators' pages, which link to the partner's pages, not the other way round.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readmeConfigurationVariables } from "../support/readme-configuration.ts";

const root = join(import.meta.dir, "..", "..");
const PARTNER_DOCS = ["docs/partner-guide.md", "docs/partner-api.md", "docs/CHANGELOG-API.md"];
/** Words of the service's inside: its servers, its mechanisms, its code and its commands. */
const INTERNAL =
  /\b(PostgreSQL|Postgres|Redis|Kafka|OpenSearch|outbox|advisory lock|migration \d+|migrations?|write_xid|transactions?|sequencer|relay|indexer|Elysia|TypeBox|Bun|SQLSTATE|Schemathesis|admin CLI|npm (?:start|test|run))\b|\b(?:services|packages|scripts|infra)\/|\.ts\b|\.sql\b/gi;

function internalWords(text: string): string[] {
  const settings = readmeConfigurationVariables(root);
  const words = [...text.matchAll(INTERNAL)].map((m) => m[0]);
  const named = [...text.matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g)]
    .map((m) => m[0])
    .filter((n) => settings.has(n));
  return [...words, ...named];
}

test("the partner's documents name nothing internal: no server, mechanism, source path, command or setting", () => {
  const found = PARTNER_DOCS.flatMap((file) =>
    internalWords(readFileSync(join(root, file), "utf8")).map((word) => `${file}: ${word}`),
  );
  expect(found).toEqual([]);
});

test("the check finds what it looks for", () => {
  expect(
    internalWords(
      "Kept in PostgreSQL by the outbox relay (migration 0029, services/api/src/feed/feed-routes.ts); FEED_RETENTION_DAYS; npm start",
    ),
  ).toEqual([
    "PostgreSQL",
    "outbox",
    "relay",
    "migration 0029",
    "services/",
    ".ts",
    "npm start",
    "FEED_RETENTION_DAYS",
  ]);
  // Warning codes look like settings but are the partner's vocabulary.
  expect(internalWords("PHOTOS_TOO_FEW, BROKER_PHONE_MISSING")).toEqual([]);
});
