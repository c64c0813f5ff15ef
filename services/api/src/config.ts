// The only place the API reads its environment. Fails at boot with every problem listed.
import {
  createEnvReader,
  readKafkaConfig,
  readLogLevel,
  readPostgresConfig,
  readRedisConfig,
  type KafkaConfig,
  type LogLevel,
  type PostgresConfig,
  type RedisConfig,
} from "@pss/service-kit";

export interface ApiConfig {
  port: number;
  publicBaseUrl: string;
  logLevel: LogLevel;
  postgres: PostgresConfig;
  redis: RedisConfig;
  kafka: KafkaConfig;
  /** Requests per minute per API key; 0 turns rate limiting off (the spec publishes no limit). */
  rateLimitPerMinute: number;
  /** Largest accepted request body in bytes. */
  maxBodyBytes: number;
  mediaDir: string;
  outboxRelayEnabled: boolean;
  // [media config fields]
  // [buyer config fields]
  // [lead config fields]
}

export function loadConfig(env: Record<string, string | undefined> = process.env): ApiConfig {
  const r = createEnvReader(env);
  const port = r.int("API_PORT", 8080, { min: 0, max: 65535 });
  const config: ApiConfig = {
    port,
    publicBaseUrl: r.url("PUBLIC_BASE_URL", `http://127.0.0.1:${port}`).replace(/\/+$/, ""),
    logLevel: readLogLevel(r),
    postgres: readPostgresConfig(r, 20),
    redis: readRedisConfig(r),
    kafka: readKafkaConfig(r, "pss-api"),
    rateLimitPerMinute: r.int("RATE_LIMIT_PER_MINUTE", 0, { min: 0 }),
    maxBodyBytes: r.int("MAX_BODY_BYTES", 1_048_576, { min: 1024 }),
    mediaDir: r.string("MEDIA_DIR", ".data/media"),
    outboxRelayEnabled: r.bool("OUTBOX_RELAY_ENABLED", true),
    // [media config values]
    // [buyer config values]
    // [lead config values]
  };
  r.done();
  return config;
}
