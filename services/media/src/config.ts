// The only place the media service reads its environment. Fails at boot with every problem listed.
import { createEnvReader, readKafkaConfig, readLogLevel, readPostgresConfig, type KafkaConfig, type LogLevel, type PostgresConfig } from "@pss/service-kit";

export interface MediaConfig {
  healthPort: number;
  logLevel: LogLevel;
  postgres: PostgresConfig;
  kafka: KafkaConfig;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): MediaConfig {
  const r = createEnvReader(env);
  const config: MediaConfig = {
    healthPort: r.int("HEALTH_PORT", 8081, { min: 0, max: 65535 }),
    logLevel: readLogLevel(r),
    postgres: readPostgresConfig(r, 5),
    kafka: readKafkaConfig(r, "pss-media"),
  };
  r.done();
  return config;
}
