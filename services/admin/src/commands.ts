// Every admin command: its flags, the servers it talks to, and what it does. Commands return one plain object:
// printed as one JSON line for scripts, or as tables for a person (output.ts).
import { Topics } from "@pss/contracts";
import {
  createEventProducer,
  createLocalMediaStorage,
  createS3MediaStorage,
  TRACE_HEADERS,
  type Logger,
} from "@pss/service-kit";
import { existsSync, statSync } from "node:fs";
import { readDeadLetters, replayDeadLetters, type DeadLetter } from "@pss/service-kit/dead-letters";
import type { Client } from "@opensearch-project/opensearch";
import type Redis from "ioredis";
import type { Kafka } from "@pss/service-kit";
import type postgres from "postgres";
// The tools that own another service's data live in that service, behind its package.json `exports`; the CLI only
// wires them (docs/architecture.md).
import { AdminError, createPartnerAdmin, MAX_LIST } from "@pss/api/partner-admin";
import { createOutboxStatus } from "@pss/api/outbox-status";
import { createPortalUserAdmin } from "@pss/api/portal-users";
import { reindex } from "@pss/indexer/reindex";
import { copyVariants } from "@pss/media/copy-variants";
import { createFailedMediaReset } from "@pss/media/failed-media-reset";
import type { AdminConfig, AdminReads, Server } from "./admin-config.ts";
import { createBackup } from "./backup/backup.ts";
import { passphraseFrom } from "./backup/key-file.ts";
import { restoreBackup } from "./backup/restore.ts";
import {
  assertFreeLocation,
  downloadBackup,
  objectStoreClient,
  parseObjectStoreLocation,
  uploadBackup,
  withScratch,
} from "./backup/object-store.ts";
import { signingKeyId } from "./backup/signature.ts";

export class UsageError extends Error {}

export type Flags = Record<string, string | boolean | undefined>;

export interface CommandContext {
  config: AdminConfig;
  sql(): postgres.Sql;
  redis(): Redis;
  kafka(): Kafka;
  opensearch(): Client;
  logger: Logger;
  /** Everything on standard input (for secrets that must not be on the command line). */
  readStdin(): Promise<string>;
  /** A line for the person on stderr (never stdout). */
  warn(message: string): void;
}

export interface Command {
  usage: string;
  /** Flag name → whether it takes a value ("value") or is a switch ("boolean"). */
  flags: Record<string, "value" | "boolean">;
  required?: string[];
  /** Exactly one of these flags must be given. */
  exactlyOne?: string[];
  /** Flags refused with a reason (replaced forms). */
  refused?: Record<string, string>;
  needs: Server[];
  /** What else the command reads from the environment, by its flags (admin-config.ts). */
  reads?(flags: Flags): AdminReads;
  run(ctx: CommandContext, flags: Flags): Promise<object>;
}

const str = (flags: Flags, name: string) => flags[name] as string;
const opt = (flags: Flags, name: string) => (flags[name] === undefined ? undefined : (flags[name] as string));

function positiveInt(flags: Flags, name: string, max = 2_147_483_647): number {
  const raw = str(flags, name);
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < 1 || n > max)
    throw new UsageError(
      `--${name} must be a positive integer${max < 2_147_483_647 ? ` up to ${max}` : ""}, got '${raw}'`,
    );
  return n;
}
const optInt = (flags: Flags, name: string, max?: number) =>
  flags[name] === undefined ? undefined : positiveInt(flags, name, max);

function offset(flags: Flags, name = "offset"): string {
  const raw = str(flags, name);
  if (!/^(0|[1-9][0-9]{0,18})$/.test(raw))
    throw new UsageError(`--${name} must be a Kafka offset (0 or a positive integer), got '${raw}'`);
  return raw;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
function uuid(flags: Flags, name: string, what: string): string {
  const raw = str(flags, name);
  if (!UUID.test(raw)) throw new UsageError(`${what} must be a UUID, got '${raw}'`);
  return raw.toLowerCase();
}

export const CONSUMERS = {
  media: Topics.mediaDeadLetter.name,
  indexer: Topics.indexerDeadLetter.name,
  leads: Topics.leadsDeadLetter.name,
  webhooks: Topics.webhooksDeadLetter.name,
} as const;

function deadLetterTopic(flags: Flags): { consumer: string; topic: string } {
  const consumer = str(flags, "consumer");
  const topic = CONSUMERS[consumer as keyof typeof CONSUMERS];
  if (!topic) throw new UsageError(`--consumer must be one of ${Object.keys(CONSUMERS).join(", ")}, got '${consumer}'`);
  return { consumer, topic };
}

/** What `dlq list` shows of a dead letter: where it came from and why, not the message itself. */
function summary(l: DeadLetter) {
  return {
    offset: l.offset,
    failedAt: l.failedAt,
    group: l.consumerGroup,
    reason: l.reason,
    sourceTopic: l.sourceTopic,
    sourcePartition: l.sourcePartition,
    sourceOffset: l.sourceOffset,
    key: l.key,
    eventType: l.event?.type ?? null,
    version: l.event?.version ?? null,
    requestId: l.headers[TRACE_HEADERS.requestId] ?? null,
    traceparent: l.headers[TRACE_HEADERS.traceparent] ?? null,
  };
}

function messageValue(value: Buffer | null): unknown {
  if (!value) return null;
  const text = value.toString("utf8");
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const partnerAdmin = (ctx: CommandContext) => createPartnerAdmin({ sql: ctx.sql(), redis: ctx.redis() });

export const COMMANDS: Record<string, Command> = {
  "partners list": {
    usage: "partners list [--limit <n>]",
    flags: { limit: "value" },
    needs: ["postgres"],
    run: async (ctx, f) => ({
      partners: await partnerAdmin(ctx).listPartners({ limit: optInt(f, "limit", MAX_LIST) }),
    }),
  },
  "partners create": {
    usage:
      'partners create --name "<name>" [--lead-tracking] [--test]   (prints the first API key once; --test: a test key beside it)',
    flags: { name: "value", "lead-tracking": "boolean", test: "boolean" },
    required: ["name"],
    needs: ["postgres"],
    run: (ctx, f) =>
      partnerAdmin(ctx).createPartner({
        name: str(f, "name"),
        leadTracking: f["lead-tracking"] === true,
        test: f.test === true,
      }),
  },
  "keys list": {
    usage: "keys list [--partner <partnerId>] [--limit <n>]",
    flags: { partner: "value", limit: "value" },
    needs: ["postgres"],
    run: async (ctx, f) => ({
      keys: await partnerAdmin(ctx).listKeys({ partnerId: opt(f, "partner"), limit: optInt(f, "limit", MAX_LIST) }),
    }),
  },
  "keys create": {
    usage:
      "keys create --partner <partnerId> [--lead-tracking] [--test]   (prints the key once; --test: a pss_test_ key, records never shown to buyers)",
    flags: { partner: "value", "lead-tracking": "boolean", test: "boolean" },
    required: ["partner"],
    needs: ["postgres"],
    run: (ctx, f) =>
      partnerAdmin(ctx).createKey({
        partnerId: str(f, "partner"),
        leadTracking: f["lead-tracking"] === true,
        test: f.test === true,
      }),
  },
  "keys revoke": {
    usage:
      "keys revoke --key-id <keyId> [--partner <partnerId>]  |  keys revoke --key-stdin [--partner <partnerId>]   (the key on stdin)",
    flags: { "key-id": "value", "key-stdin": "boolean", partner: "value" },
    exactlyOne: ["key-id", "key-stdin"],
    refused: {
      key: "--key is not accepted: a key on the command line stays in shell history and process lists; use --key-id <id> (see 'keys list') or pipe the key into --key-stdin",
    },
    needs: ["postgres", "redis"],
    async run(ctx, f) {
      let apiKey: string | undefined;
      if (f["key-stdin"] === true) {
        apiKey = (await ctx.readStdin()).trim();
        if (apiKey === "") throw new UsageError("--key-stdin: no key on standard input");
      }
      const { cacheWarning, ...result } = await partnerAdmin(ctx).revokeKeyNamingIt({
        keyId: opt(f, "key-id"),
        apiKey,
        partnerId: opt(f, "partner"),
      });
      if (cacheWarning) ctx.warn(`warning: ${cacheWarning}`);
      return result;
    },
  },
  "portal-users invite": {
    usage:
      "portal-users invite --partner <partnerId> --email <address> [--lead-access]   (the portal e-mails an invitation; again: changes --lead-access)",
    flags: { partner: "value", email: "value", "lead-access": "boolean" },
    required: ["partner", "email"],
    needs: ["postgres"],
    run: (ctx, f) =>
      createPortalUserAdmin(ctx.sql()).invite({
        partnerId: uuid(f, "partner", "--partner"),
        email: str(f, "email"),
        leadAccess: f["lead-access"] === true,
      }),
  },
  "portal-users list": {
    usage: "portal-users list --partner <partnerId>",
    flags: { partner: "value" },
    required: ["partner"],
    needs: ["postgres"],
    run: (ctx, f) => createPortalUserAdmin(ctx.sql()).list(uuid(f, "partner", "--partner")),
  },
  "portal-users remove": {
    usage: "portal-users remove --partner <partnerId> --email <address>   (signs them out everywhere at once)",
    flags: { partner: "value", email: "value" },
    required: ["partner", "email"],
    needs: ["postgres"],
    run: (ctx, f) =>
      createPortalUserAdmin(ctx.sql()).remove({ partnerId: uuid(f, "partner", "--partner"), email: str(f, "email") }),
  },
  "offices list": {
    usage: "offices list [--partner <partnerId>] [--organization <organizationId>] [--limit <n>]",
    flags: { partner: "value", organization: "value", limit: "value" },
    needs: ["postgres"],
    run: async (ctx, f) => ({
      offices: await partnerAdmin(ctx).listOffices({
        partnerId: opt(f, "partner"),
        organizationId: optInt(f, "organization"),
        limit: optInt(f, "limit", MAX_LIST),
      }),
    }),
  },
  "offices create": {
    usage: 'offices create --organization <organizationId> --name "<name>"',
    flags: { organization: "value", name: "value" },
    required: ["organization", "name"],
    needs: ["postgres"],
    run: (ctx, f) =>
      partnerAdmin(ctx).createOffice({ organizationId: positiveInt(f, "organization"), name: str(f, "name") }),
  },
  "brokers assign-office": {
    usage:
      "brokers assign-office --partner <partnerId> --external-broker-id <id> --office <officeId> [--test]   (--test: the test-mode broker)",
    flags: { partner: "value", "external-broker-id": "value", office: "value", test: "boolean" },
    required: ["partner", "external-broker-id", "office"],
    needs: ["postgres"],
    run: (ctx, f) =>
      partnerAdmin(ctx).assignBrokerOffice({
        partnerId: str(f, "partner"),
        externalBrokerId: str(f, "external-broker-id"),
        officeId: positiveInt(f, "office"),
        test: f.test === true,
      }),
  },
  "dlq list": {
    usage:
      "dlq list --consumer <media|indexer|leads|webhooks> [--limit <n>] [--group <consumerGroup>]   (newest n, default 100)",
    flags: { consumer: "value", limit: "value", group: "value" },
    required: ["consumer"],
    needs: ["kafka"],
    async run(ctx, f) {
      const { consumer, topic } = deadLetterTopic(f);
      const letters = await readDeadLetters(ctx.kafka(), topic, { limit: optInt(f, "limit", 100_000) ?? 100 });
      const group = opt(f, "group");
      return { consumer, topic, deadLetters: letters.filter((l) => !group || l.consumerGroup === group).map(summary) };
    },
  },
  "dlq show": {
    usage: "dlq show --consumer <media|indexer|leads|webhooks> --offset <offset>   (headers and the message itself)",
    flags: { consumer: "value", offset: "value" },
    required: ["consumer", "offset"],
    needs: ["kafka"],
    async run(ctx, f) {
      const { consumer, topic } = deadLetterTopic(f);
      const [letter] = await readDeadLetters(ctx.kafka(), topic, { offset: offset(f) });
      if (!letter) throw new AdminError("not_found", `no dead letter at offset ${str(f, "offset")} of ${topic}`);
      return { consumer, topic, ...summary(letter), headers: letter.headers, value: messageValue(letter.value) };
    },
  },
  "dlq replay": {
    usage:
      "dlq replay --consumer <media|indexer|leads|webhooks> (--offset <offset> | --all [--group <consumerGroup>])   (fix the cause first)",
    flags: { consumer: "value", offset: "value", all: "boolean", group: "value" },
    required: ["consumer"],
    exactlyOne: ["offset", "all"],
    needs: ["kafka"],
    async run(ctx, f) {
      const { consumer, topic } = deadLetterTopic(f);
      if (f.group !== undefined && f.all !== true) throw new UsageError("--group goes with --all");
      const group = opt(f, "group");
      const letters = (
        f.all === true
          ? await readDeadLetters(ctx.kafka(), topic, { limit: 1_000_000, timeoutMs: 120_000 })
          : await readDeadLetters(ctx.kafka(), topic, { offset: offset(f) })
      ).filter((l) => !group || l.consumerGroup === group);
      if (f.offset !== undefined && letters.length === 0)
        throw new AdminError("not_found", `no dead letter at offset ${str(f, "offset")} of ${topic}`);
      const producer = createEventProducer(ctx.kafka());
      await producer.connect();
      try {
        await replayDeadLetters(producer, topic, letters);
      } finally {
        await producer.disconnect().catch(() => {});
      }
      return {
        consumer,
        topic,
        replayed: letters.length,
        messages: letters.map((l) => ({
          offset: l.offset,
          sourceTopic: l.sourceTopic,
          sourcePartition: l.sourcePartition,
          key: l.key,
          eventType: l.event?.type ?? null,
          version: l.event?.version ?? null,
        })),
      };
    },
  },
  reindex: {
    usage:
      "reindex   (new index from PostgreSQL behind OPENSEARCH_INDEX_ALIAS, alias swapped atomically, old index dropped)",
    flags: {},
    needs: ["postgres", "opensearch"],
    async run(ctx) {
      let reported = 0;
      const result = await reindex({
        sql: ctx.sql(),
        opensearch: ctx.opensearch(),
        alias: ctx.config.searchAlias,
        logger: ctx.logger,
        onProgress: (n) => {
          if (n - reported >= 5000) ctx.warn(`reindex: ${(reported = n)} listings written`);
        },
      });
      if (result.rejected.length > 0)
        ctx.warn(`warning: OpenSearch refused ${result.rejected.length} listing(s); see 'rejected'`);
      return result;
    },
  },
  "media retry": {
    usage: "media retry (--listing <serviceListingId> | --partner <partnerId> | --all-transient)",
    flags: { listing: "value", partner: "value", "all-transient": "boolean" },
    exactlyOne: ["listing", "partner", "all-transient"],
    needs: ["postgres"],
    async run(ctx, f) {
      const sql = ctx.sql();
      let scope: Parameters<ReturnType<typeof createFailedMediaReset>["reset"]>[0];
      if (f.listing !== undefined) {
        const listingId = String(positiveInt(f, "listing", Number.MAX_SAFE_INTEGER));
        const [found] = await sql`SELECT 1 FROM listings WHERE id = ${listingId}::bigint`;
        if (!found) throw new AdminError("not_found", `listing ${listingId} not found`);
        scope = { listingId };
      } else if (f.partner !== undefined) {
        const partnerId = uuid(f, "partner", "partner id");
        const [found] = await sql`SELECT 1 FROM partners WHERE id = ${partnerId}`;
        if (!found) throw new AdminError("not_found", `partner ${partnerId} not found`);
        scope = { partnerId };
      } else {
        scope = { transientOnly: true };
      }
      const reset = await createFailedMediaReset({ sql }).reset(scope);
      return {
        photos: reset.photos.length,
        avatars: reset.avatars.length,
        reset: [
          ...reset.photos.map((p) => ({ kind: "photo", ...p })),
          ...reset.avatars.map((a) => ({ kind: "avatar", ...a })),
        ],
      };
    },
  },
  "media copy-to-s3": {
    usage:
      "media copy-to-s3 [--from-dir <dir>] [--dry-run]   (copies variants from MEDIA_DIR into the S3_* bucket; run again after switching)",
    flags: { "from-dir": "value", "dry-run": "boolean" },
    needs: ["s3"],
    async run(ctx, f) {
      const dir = opt(f, "from-dir") ?? ctx.config.mediaDir;
      if (!existsSync(dir) || !statSync(dir).isDirectory())
        throw new AdminError("not_found", `media directory ${dir} not found (set MEDIA_DIR or --from-dir)`);
      const s3 = ctx.config.s3!;
      const result = await copyVariants(createLocalMediaStorage({ dir }), createS3MediaStorage(s3), {
        dryRun: f["dry-run"] === true,
        onProgress: (r) =>
          ctx.warn(`${r.examined} examined, ${r.copied} copied, ${r.alreadyThere} already there, ${r.failed} failed`),
      });
      if (result.failed > 0)
        ctx.warn(`${result.failed} variant(s) not copied; run the command again once the cause is fixed`);
      return { from: dir, to: `${s3.endpoint ?? "s3"}/${s3.bucket}/${s3.prefix}`, ...result };
    },
  },
  "outbox status": {
    usage: "outbox status [--limit <n>]   (backlog, oldest age, set-aside rows)",
    flags: { limit: "value" },
    needs: ["postgres"],
    async run(ctx, f) {
      const status = createOutboxStatus({ sql: ctx.sql() });
      const backlog = await status.backlog();
      return { ...backlog, setAsideRows: await status.listSetAside(optInt(f, "limit", MAX_LIST) ?? 100) };
    },
  },
  "outbox retry": {
    usage: "outbox retry (--id <outboxId> | --all)   (re-queue set-aside rows after fixing the cause)",
    flags: { id: "value", all: "boolean" },
    exactlyOne: ["id", "all"],
    needs: ["postgres"],
    async run(ctx, f) {
      const status = createOutboxStatus({ sql: ctx.sql() });
      if (f.id !== undefined) {
        const id = String(positiveInt(f, "id", Number.MAX_SAFE_INTEGER));
        const requeued = await status.requeue([id]);
        if (requeued === 0) throw new AdminError("not_found", `outbox row ${id} is not set aside`);
        return { requeued, ids: [id] };
      }
      // One page: rows the relay sets aside again meanwhile are not chased in a loop.
      const rows = await status.listSetAside(MAX_LIST);
      const ids = rows.map((r) => r.id);
      const requeued = await status.requeue(ids);
      if (rows.length === MAX_LIST)
        ctx.warn(`${MAX_LIST} rows re-queued, the most one run takes: run 'outbox retry --all' again for the rest`);
      return { requeued, ids };
    },
  },
  backup: {
    usage:
      "backup --to <dir|s3://bucket/path> [--with-webhook-key < passphrase]   (PostgreSQL at one snapshot, the media store's variants, signed with BACKUP_SIGNING_KEY; the webhook key only when asked, sealed with the passphrase on stdin; docs/operations.md)",
    flags: { to: "value", "with-webhook-key": "boolean" },
    required: ["to"],
    refused: {
      "without-webhook-key":
        "the webhook key is left out unless --with-webhook-key asks for it (sealed with a passphrase): drop the flag",
    },
    needs: ["postgres"],
    reads: (f) => ({ mediaStore: true, backupSigningKey: true, webhookKey: f["with-webhook-key"] === true }),
    async run(ctx, f) {
      const target = str(f, "to");
      const progress = (line: string) => ctx.warn(`backup: ${line}`);
      const webhookKey =
        f["with-webhook-key"] === true
          ? { key: ctx.config.webhookKey!, passphrase: passphraseFrom(await ctx.readStdin(), "--with-webhook-key") }
          : null;
      const deps = {
        sql: ctx.sql(),
        mediaStore: ctx.config.mediaStore!,
        signingKey: ctx.config.backupSigningKey!,
        webhookKey,
        progress,
      };
      const location = parseObjectStoreLocation(target);
      const m = location
        ? await withScratch(async (dir) => {
            // Checked before the backup is made too: a name in use fails at once, not after the copy.
            const client = objectStoreClient(deps.mediaStore, location);
            await assertFreeLocation(client, location);
            const made = await createBackup(deps, dir);
            await uploadBackup(client, location, dir, progress);
            return made;
          })
        : await createBackup(deps, target);
      if (m.webhookKey)
        ctx.warn(
          `backup: ${target}/${m.webhookKey.file} holds the webhook secret key sealed with your passphrase: whoever has both reads every partner's webhook secret in this backup; keep the passphrase apart from it`,
        );
      return {
        backup: location ? location.url : target,
        recoveryPoint: m.recoveryPoint.at,
        snapshot: m.recoveryPoint.snapshot,
        tables: m.database.tables.length,
        rows: m.database.tables.reduce((n, t) => n + t.rows, 0),
        objects: m.objects.count,
        objectBytes: m.objects.bytes,
        signedWith: { keyId: signingKeyId(ctx.config.backupSigningKey!) },
        webhookKey: m.webhookKey ? { keyId: m.webhookKey.keyId, file: m.webhookKey.file } : null,
        durationsMs: m.durationsMs,
      };
    },
  },
  restore: {
    usage:
      "restore --from <dir|s3://bucket/path> [--webhook-key-to <file> < passphrase]   (checks the seal with BACKUP_SIGNING_KEY and every sum, into a new, empty database and the media store; then run 'reindex')",
    flags: { from: "value", "webhook-key-to": "value" },
    required: ["from"],
    needs: ["postgres"],
    reads: () => ({ mediaStore: true, backupSigningKey: true }),
    async run(ctx, f) {
      const dir = str(f, "from");
      const webhookKeyTo = opt(f, "webhook-key-to");
      const progress = (line: string) => ctx.warn(`restore: ${line}`);
      const deps = {
        sql: ctx.sql(),
        signingKey: ctx.config.backupSigningKey!,
        mediaStore: ctx.config.mediaStore!,
        progress,
      };
      const options = {
        webhookKeyTo,
        passphrase: async () => passphraseFrom(await ctx.readStdin(), "--webhook-key-to"),
      };
      const location = parseObjectStoreLocation(dir);
      const r = location
        ? await withScratch(async (scratch) => {
            await downloadBackup(objectStoreClient(deps.mediaStore, location), location, scratch, progress);
            return restoreBackup(deps, scratch, options);
          })
        : await restoreBackup(deps, dir, options);
      const key = r.manifest.webhookKey;
      const next = [
        "npm run admin -- reindex (or docker compose run --rm admin reindex): search is rebuilt from PostgreSQL",
        key && r.webhookKeyWrittenTo
          ? `give the services the backup's webhook secret key (key id ${key.keyId}) as WEBHOOK_SECRET_KEY_FILE: written to ${r.webhookKeyWrittenTo}`
          : key
            ? `give the services the backup's webhook secret key (key id ${key.keyId}): --webhook-key-to <file> with its passphrase on stdin writes it out, or use the key from your secrets manager`
            : "give the services the webhook secret key the backup was made with (not in this backup: from your secrets manager)",
        "start the services: unsent events wait in the outbox and are sent then; Kafka needs nothing restored",
      ];
      for (const line of next) ctx.warn(`next: ${line}`);
      return {
        restoredFrom: dir,
        recoveryPoint: r.manifest.recoveryPoint.at,
        tables: r.tables,
        rows: r.rows,
        objects: r.objects,
        upgradedWith: r.upgradedWith,
        webhookKey: key ? { keyId: key.keyId, writtenTo: r.webhookKeyWrittenTo } : null,
        durationsMs: r.durationsMs,
        next,
      };
    },
  },
};

export const USAGE = `usage: npm run --silent admin -- <command> [flags] [--json]

commands:
${Object.values(COMMANDS)
  .map((c) => `  ${c.usage}`)
  .join("\n")}

Output: one JSON document on stdout when stdout is not a terminal (or with --json), tables on a terminal.
Servers: DATABASE_URL, REDIS_URL, KAFKA_BROKERS, OPENSEARCH_URL (OPENSEARCH_INDEX_ALIAS for reindex), S3_ENDPOINT
with S3_BUCKET, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY (media copy-to-s3; backup and restore unless
MEDIA_STORAGE=local, then MEDIA_DIR), BACKUP_SIGNING_KEY or BACKUP_SIGNING_KEY_FILE (backup and restore),
WEBHOOK_SECRET_KEY or WEBHOOK_SECRET_KEY_FILE (backup --with-webhook-key); each URL not set is
the local infrastructure's (npm start / npm run infra -- up).
Exit codes: 0 ok, 1 failure (not found, configuration, server), 2 usage error.`;
