// The only place the indexer service reads its environment. Fails at boot with every problem listed.
import { createEnvReader, readKafkaConfig, readLogLevel, readPostgresConfig, type KafkaConfig, type LogLevel, type PostgresConfig } from "@pss/service-kit";

export interface IndexerConfig {
  healthPort: number;
  logLevel: LogLevel;
  postgres: PostgresConfig;
  kafka: KafkaConfig;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): IndexerConfig {
  const r = createEnvReader(env);
  const config: IndexerConfig = {
    healthPort: r.int("HEALTH_PORT", 8082, { min: 0, max: 65535 }),
    logLevel: readLogLevel(r),
    postgres: readPostgresConfig(r, 5),
    kafka: readKafkaConfig(r, "pss-indexer"),
  };
  r.done();
  return config;
}
