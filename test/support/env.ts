import type { InfraUrls } from "./infrastructure.ts";

/** The URLs test/setup.ts put in the environment. */
export function testUrls(): InfraUrls {
  const e = process.env;
  for (const v of ["DATABASE_URL", "REDIS_URL", "KAFKA_BROKERS", "OPENSEARCH_URL"]) {
    if (!e[v]) throw new Error(`${v} is not set: run tests through 'npm test' or 'bun test' (test/setup.ts preload)`);
  }
  return { DATABASE_URL: e.DATABASE_URL!, REDIS_URL: e.REDIS_URL!, KAFKA_BROKERS: e.KAFKA_BROKERS!, OPENSEARCH_URL: e.OPENSEARCH_URL! };
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}
