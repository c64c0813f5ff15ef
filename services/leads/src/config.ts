// The only place the leads service reads its environment. Fails at boot with every problem listed.
import { createEnvReader, readKafkaConfig, readLogLevel, readPostgresConfig, type KafkaConfig, type LogLevel, type PostgresConfig } from "@pss/service-kit";

export interface LeadsConfig {
  healthPort: number;
  logLevel: LogLevel;
  postgres: PostgresConfig;
  kafka: KafkaConfig;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): LeadsConfig {
  const r = createEnvReader(env);
  const config: LeadsConfig = {
    healthPort: r.int("HEALTH_PORT", 8083, { min: 0, max: 65535 }),
    logLevel: readLogLevel(r),
    postgres: readPostgresConfig(r, 5),
    kafka: readKafkaConfig(r, "pss-leads"),
  };
  r.done();
  return config;
}
