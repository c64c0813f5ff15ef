// The admin CLI's configuration: the only place it reads its environment. Each command names the servers it
// needs and only those are read. A URL left unset is taken from the local infrastructure runner (what
// `npm start` uses) when the checkout has one; in an image without it, the URL is required as before.
import { DEFAULT_SEARCH_ALIAS, DEFAULT_TOPIC_SETTINGS } from "@pss/contracts";
import {
  createEnvReader,
  DEFAULT_CONSUMER_SETTINGS,
  readKafkaConfig,
  readOpenSearchConfig,
  readSearchAlias,
  readMediaStorageConfig,
  readPostgresConfig,
  readRedisConfig,
  readSecretKey,
  type EnvReader,
  type KafkaConfig,
  type MediaStorageConfig,
  type OpenSearchConfig,
  type PostgresConfig,
  type RedisConfig,
  type S3StorageConfig,
} from "@pss/service-kit";

export type Server = "postgres" | "redis" | "kafka" | "opensearch" | "s3";

/** The environment variable each server's address is read from (the same as every service's). */
export const SERVER_VARIABLES: Record<Server, string> = {
  postgres: "DATABASE_URL",
  redis: "REDIS_URL",
  kafka: "KAFKA_BROKERS",
  opensearch: "OPENSEARCH_URL",
  s3: "S3_ENDPOINT",
};

/** What goes with S3_ENDPOINT; taken from the local runner together with it. */
const S3_COMPANIONS = ["S3_BUCKET", "S3_REGION", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY"];

export interface AdminConfig {
  postgres: PostgresConfig;
  redis: RedisConfig;
  kafka: KafkaConfig;
  opensearch: OpenSearchConfig;
  /** Alias buyers' search reads (reindex swaps it). */
  searchAlias: string;
  /** The object store (S3_*), for commands that need it. */
  s3: S3StorageConfig | null;
  /** MEDIA_DIR: variants in a local directory (the copy's source). */
  mediaDir: string;
  /** The media store the services use (MEDIA_STORAGE, s3 unless `local`), for commands that read `mediaStore`. */
  mediaStore: MediaStorageConfig | null;
  /** WEBHOOK_SECRET_KEY (or _FILE), for commands that read `webhookKey`. */
  webhookKey: Buffer | null;
  /** BACKUP_SIGNING_KEY (or _FILE), for commands that read `backupSigningKey` (backup, restore). */
  backupSigningKey: Buffer | null;
  /** Needed servers whose URL was not set and came from the local infrastructure runner. */
  local: Server[];
}

/** What a command reads besides its servers' addresses. */
export interface AdminReads {
  /** The services' media store: MEDIA_DIR when MEDIA_STORAGE=local, else the S3_* bucket (what compose and npm start use). */
  mediaStore?: boolean;
  webhookKey?: boolean;
  backupSigningKey?: boolean;
}

/** A 32-byte key the command needs, read as the services read theirs (NAME or NAME_FILE); `missing` says why. */
function readRequiredKey(r: EnvReader, env: Record<string, string | undefined>, name: string, missing: string) {
  if (!env[name]?.trim() && !env[`${name}_FILE`]?.trim()) {
    r.problem(missing);
    return null;
  }
  return readSecretKey(r, name);
}

const WEBHOOK_KEY_MISSING =
  "WEBHOOK_SECRET_KEY or WEBHOOK_SECRET_KEY_FILE (as the API and webhooks service have it) is needed for --with-webhook-key; or leave the flag out (the key is then not in the backup)";
/**
 * BACKUP_SIGNING_KEY (or _FILE) seals every backup's manifest and is checked by every restore. It is never written
 * into a backup: keep it apart from them (a secrets manager), and keep it safe: without it no backup can be
 * restored (docs/operations.md, "Backup and restore").
 */
const SIGNING_KEY_MISSING =
  "BACKUP_SIGNING_KEY or BACKUP_SIGNING_KEY_FILE is required to make or restore a backup: 32 random bytes (`openssl rand -base64 32`), kept apart from the backups and the same for every backup you may restore";

/**
 * `needs`: the servers the command talks to; the others are neither read nor required.
 * `localUrls`: the local runner's URLs by variable name, when the runner is part of this checkout.
 */
export function loadAdminConfig(
  env: Record<string, string | undefined>,
  needs: readonly Server[],
  localUrls?: Record<string, string>,
  reads: AdminReads = {},
): AdminConfig {
  // The services' store is the object store unless MEDIA_STORAGE says `local` (scripts/start.ts, compose).
  const localMedia = reads.mediaStore === true && (env.MEDIA_STORAGE ?? "").trim() === "local";
  if (reads.mediaStore && !localMedia && !needs.includes("s3")) needs = [...needs, "s3"];
  const local: Server[] = [];
  const effective: Record<string, string | undefined> = { ...env };
  for (const server of needs) {
    const name = SERVER_VARIABLES[server];
    if ((env[name] ?? "").trim() !== "") continue;
    const fallback = localUrls?.[name];
    if (fallback) {
      effective[name] = fallback;
      local.push(server);
      // The local object store's bucket and credentials come with its address, whatever else is set.
      if (server === "s3") for (const v of S3_COMPANIONS) if (localUrls?.[v]) effective[v] = localUrls[v];
    }
  }
  const has = (s: Server) => needs.includes(s);
  // Commands that need the object store read it as MEDIA_STORAGE=s3 would, whatever the services use now.
  const r = createEnvReader(has("s3") ? { ...effective, MEDIA_STORAGE: "s3" } : effective);
  // A one-shot command needs at most a couple of connections, whatever pool size the services use.
  const config: AdminConfig = {
    postgres: has("postgres") ? { ...readPostgresConfig(r, 2), maxConnections: 2 } : { url: "", maxConnections: 2 },
    redis: has("redis") ? readRedisConfig(r) : { url: "" },
    kafka: has("kafka")
      ? readKafkaConfig(r, "pss-admin")
      : { brokers: [], clientId: "pss-admin", topics: DEFAULT_TOPIC_SETTINGS, consumer: DEFAULT_CONSUMER_SETTINGS },
    opensearch: has("opensearch") ? readOpenSearchConfig(r) : { url: "" },
    searchAlias: has("opensearch") ? readSearchAlias(r, DEFAULT_SEARCH_ALIAS) : DEFAULT_SEARCH_ALIAS,
    s3: has("s3") ? (readMediaStorageConfig(r) as S3StorageConfig) : null,
    mediaDir: has("s3") || localMedia ? r.string("MEDIA_DIR", ".data/media") : ".data/media",
    mediaStore: null,
    webhookKey: reads.webhookKey ? readRequiredKey(r, env, "WEBHOOK_SECRET_KEY", WEBHOOK_KEY_MISSING) : null,
    backupSigningKey: reads.backupSigningKey
      ? readRequiredKey(r, env, "BACKUP_SIGNING_KEY", SIGNING_KEY_MISSING)
      : null,
    local,
  };
  if (config.webhookKey && config.backupSigningKey?.equals(config.webhookKey))
    r.problem(
      "BACKUP_SIGNING_KEY is the webhook secret key: give backups a signing key of their own (`openssl rand -base64 32`)",
    );
  if (reads.mediaStore) config.mediaStore = localMedia ? { kind: "local", dir: config.mediaDir } : config.s3;
  r.done();
  return config;
}
