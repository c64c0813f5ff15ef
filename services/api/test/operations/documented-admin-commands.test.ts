// The admin command lines the documentation gives (README.md, docs/api-internals.md, docs/operations.md), taken
// from the files themselves and run by the shell exactly as written, with no server URLs in the environment:
// as a new user runs them after `npm start`, against the local infrastructure's servers on their default ports
// (database `pss`). Only the placeholders are filled in (<partnerId> from the partner the first line created,
// …) and the example partner name gets a unique suffix. Lines that would change shared state beyond this
// test's own records (replays, reindex, media and outbox retries) are checked by the CLI's own parser here and
// run for real, against this test's database, in the other tests of this folder.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { uniqueName } from "../../../../test/support/env.ts";
import { parseArgs } from "../../../admin/src/cli.ts";
import { answers, findLocalInfra } from "../../../admin/src/local-infra.ts";
import { adminEnv, ROOT, shell } from "../support/admin-cli.ts";

const DOCUMENTS = ["README.md", "docs/api-internals.md", "docs/operations.md"];
const PREFIX = "npm run --silent admin -- ";

interface Documented {
  file: string;
  /** The command line as written, without its comment. */
  line: string;
  /** The words after `admin --`, as the CLI parses them (quotes removed). */
  command: string;
  /** The JSON document a comment shows as its output, when it shows one. */
  example: Record<string, unknown> | null;
}

/** Every admin command line of a document: in code blocks one per line, in running text one per code span. */
function documented(file: string): Documented[] {
  const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
  const found: Documented[] = [];
  lines.forEach((text, i) => {
    for (let at = text.indexOf(PREFIX); at !== -1; at = text.indexOf(PREFIX, at + 1)) {
      const inSpan = (text.slice(0, at).match(/`/g)?.length ?? 0) % 2 === 1;
      let rest = text.slice(at);
      if (inSpan) rest = rest.slice(0, rest.indexOf("`"));
      const hash = rest.search(/\s#\s/);
      const line = (hash === -1 ? rest : rest.slice(0, hash)).trim();
      let comment = hash === -1 ? "" : rest.slice(hash).trim().replace(/^#\s*/, "");
      // An example output may also sit on the next line, as a comment of its own.
      if (!comment && !inSpan && lines[i + 1]?.trim().startsWith("#"))
        comment = lines[i + 1]!.trim().replace(/^#\s*/, "");
      const command = line.slice(PREFIX.length);
      if (command.startsWith("<")) continue; // the general form, `admin -- <command>`
      found.push({ file, line, command, example: exampleOf(comment) });
    }
  });
  return found;
}

function exampleOf(comment: string): Record<string, unknown> | null {
  if (!comment.startsWith("{")) return null;
  try {
    return JSON.parse(comment.replaceAll("…", "")) as Record<string, unknown>;
  } catch {
    return null; // an abbreviated example (… outside strings): its keys are not checked
  }
}

/** The words of a command line the way sh splits this simple form (double quotes only; `< file` is sh's, not a word). */
function words(command: string): string[] {
  return [...command.replace(/\s+<\s+\S+\s*$/, "").matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}

const all = DOCUMENTS.flatMap(documented);
const commandOf = (d: Documented) => {
  const w = words(d.command);
  return ["help", "reindex", "backup", "restore"].includes(w[0]!) ? w[0]! : `${w[0]} ${w[1]}`;
};

// Run for real, without URLs, in this order (each may need what an earlier one printed).
const RUN_ORDER = [
  "help",
  "partners create",
  "keys create",
  "keys list",
  "offices create",
  "brokers assign-office",
  "keys revoke",
  "outbox status",
  "dlq list",
];
// Changing shared state (Kafka topics every consumer reads, the index `npm start` serves, other partners' rows):
// parsed here, run against this test run's own database in the named tests.
const RUN_ELSEWHERE: Record<string, string> = {
  "dlq show": "dead-letter-replay.test.ts",
  "dlq replay": "dead-letter-replay.test.ts",
  reindex: "reindex-under-search.test.ts",
  "media retry": "media-retry.test.ts",
  "outbox retry": "../admin-cli.test.ts",
  backup: "../backup-restore.test.ts",
  restore: "../backup-restore.test.ts",
  // Sends an invitation e-mail (the mail relay is the run's): invite, list and remove in order there.
  "portal-users invite": "../admin-cli.test.ts",
  "portal-users list": "../admin-cli.test.ts",
  "portal-users remove": "../admin-cli.test.ts",
};

const noUrls = adminEnv({
  DATABASE_URL: undefined,
  REDIS_URL: undefined,
  KAFKA_BROKERS: undefined,
  OPENSEARCH_URL: undefined,
  OPENSEARCH_INDEX_ALIAS: undefined,
});
const suffix = uniqueName("docs");
const values: Record<string, string> = { name: uniqueName("Docs-office") };
/** Every key this test made, revoked at the end; and those of the partner made last. */
const keyIds: string[] = [];
let partnerKeyIds: string[] = [];

/** The line with its placeholders filled in, `[--flag]` taken, and the example partner name made unique. */
function fill(line: string, placeholders: Record<string, string>): string {
  return line
    .replace(/\[(--[a-z-]+)\]/g, "$1")
    .replace('"Acme Brokers"', `"Acme Brokers ${suffix}"`)
    .replace(/<([A-Za-z]+)>/g, (_, name: string) => {
      const value = placeholders[name];
      if (value === undefined) throw new Error(`no value for <${name}> in '${line}'`);
      return value;
    });
}

// What `npm start` leaves running: the local runner's servers on their default ports. Where the test servers
// come from elsewhere (testcontainers, other URLs) and nothing answers there, there is nothing to run against.
const infra = await findLocalInfra();
const localUp =
  infra !== null &&
  (await Promise.all(["DATABASE_URL", "REDIS_URL", "KAFKA_BROKERS"].map((v) => answers(infra.urls[v]!)))).every(
    Boolean,
  );

let local: postgres.Sql | null = null;
afterAll(async () => {
  // Leave no working key behind in the shared database.
  for (const keyId of keyIds) await shell(`${PREFIX}keys revoke --key-id ${keyId}`, noUrls);
  await local?.end();
});

describe("the documented admin commands", () => {
  test("the documents give admin command lines, each one this test knows how to check", () => {
    expect(all.length).toBeGreaterThan(10);
    for (const d of all) {
      const command = commandOf(d);
      expect({ line: d.line, known: RUN_ORDER.includes(command) || command in RUN_ELSEWHERE }).toEqual({
        line: d.line,
        known: true,
      });
    }
    // README's own two.
    expect(all.filter((d) => d.file === "README.md").map((d) => d.line)).toEqual([
      `${PREFIX}partners create --name "Acme Brokers" --lead-tracking`,
      `${PREFIX}help`,
    ]);
  });

  test("lines that change shared state parse as written (their behaviour is tested against this run's own database)", () => {
    const dummy = {
      offset: "0",
      consumerGroup: "pss-indexer",
      serviceListingId: "1",
      partnerId: crypto.randomUUID(),
      outboxId: "1",
      dir: "/tmp/pss-backup-example",
      file: "/tmp/pss-backup-example-key",
    };
    const elsewhere = all.filter((d) => commandOf(d) in RUN_ELSEWHERE);
    expect(new Set(elsewhere.map(commandOf))).toEqual(new Set(Object.keys(RUN_ELSEWHERE)));
    for (const d of elsewhere) expect(() => parseArgs(words(fill(d.command, dummy)))).not.toThrow();
  });

  test.skipIf(!localUp)(
    "run as written with no URLs set, each works against the local servers and prints what the document shows",
    async () => {
      local = postgres(infra!.urls.DATABASE_URL!, { max: 1, onnotice: () => {} });
      const toRun = all
        .filter((d) => RUN_ORDER.includes(commandOf(d)))
        .sort((a, b) => RUN_ORDER.indexOf(commandOf(a)) - RUN_ORDER.indexOf(commandOf(b)));
      expect(new Set(toRun.map(commandOf))).toEqual(new Set(RUN_ORDER));

      for (const d of toRun) {
        const command = commandOf(d);
        if (command === "brokers assign-office" && !values.id) {
          // A broker as the partner API would have created it in that database.
          values.id = uniqueName("docs-broker");
          await local`
          INSERT INTO brokers (partner_id, external_id, office_id, name, email, content_hash)
          VALUES (${values.partnerId!}, ${values.id}, ${Number(values.defaultOfficeId)}, 'Docs Broker', 'docs.broker@example.com', '\\x00'::bytea)`;
        }
        const line = fill(d.line, values);
        const r = await shell(line, noUrls);
        expect({ line, code: r.code, stderr: r.code === 0 ? "" : r.stderr }).toEqual({ line, code: 0, stderr: "" });
        if (command === "help") {
          expect(r.stdout).toBe("");
          for (const usage of [
            "partners create",
            "keys revoke --key-id",
            "dlq replay",
            "reindex",
            "media retry",
            "outbox status",
          ])
            expect(r.stderr).toContain(usage);
          continue;
        }
        const out = JSON.parse(r.stdout) as Record<string, any>;
        expect(r.stdout.trimEnd()).not.toContain("\n");
        if (d.example)
          expect({ line, keys: Object.keys(out).sort() }).toEqual({ line, keys: Object.keys(d.example).sort() });

        if (command === "partners create") {
          expect(out.apiKey).toMatch(/^pss_live_/);
          Object.assign(values, {
            partnerId: out.partnerId,
            organizationId: String(out.organizationId),
            defaultOfficeId: String(out.officeId),
          });
          keyIds.push(out.keyId);
          partnerKeyIds = [out.keyId];
          const [partner] = await local`SELECT name FROM partners WHERE id = ${out.partnerId}`;
          expect(partner?.name).toBe(`Acme Brokers ${suffix}`);
        } else if (command === "keys create") {
          values.keyId = out.keyId;
          values.apiKey = out.apiKey;
          keyIds.push(out.keyId);
          partnerKeyIds.push(out.keyId);
        } else if (command === "keys list") {
          expect(out.keys.map((k: any) => k.keyId).sort()).toEqual([...partnerKeyIds].sort());
          expect(r.stdout).not.toContain(values.apiKey!);
        } else if (command === "offices create") {
          values.officeId = String(out.officeId);
          const [office] = await local`SELECT name, is_default FROM offices WHERE id = ${out.officeId}`;
          expect(office).toEqual({ name: values.name, is_default: false });
        } else if (command === "brokers assign-office") {
          const [broker] =
            await local`SELECT office_id FROM brokers WHERE partner_id = ${values.partnerId!} AND external_id = ${values.id!}`;
          expect(String(broker!.office_id)).toBe(values.officeId!);
        } else if (command === "keys revoke") {
          expect(out).toEqual({ revoked: true, keyId: values.keyId });
          const [key] = await local`SELECT revoked_at FROM api_keys WHERE id = ${values.keyId!}`;
          expect(key!.revoked_at).toBeInstanceOf(Date);
        }
      }
    },
    180_000,
  );
});
