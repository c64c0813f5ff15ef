import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { Component, InfraPaths } from "./component.ts";
import { kafkaComponent } from "./kafka.ts";
import { opensearchComponent } from "./opensearch.ts";
import { postgresComponent } from "./postgres.ts";
import { redisComponent } from "./redis.ts";

export type { Component, InfraPaths } from "./component.ts";

export const URL_VARIABLES = ["DATABASE_URL", "REDIS_URL", "KAFKA_BROKERS", "OPENSEARCH_URL"] as const;
export type InfraUrls = Record<(typeof URL_VARIABLES)[number], string>;

export const PART_NAMES = ["postgres", "redis", "kafka", "opensearch"] as const;
export type PartName = (typeof PART_NAMES)[number];

export function isPartName(name: string): name is PartName {
  return (PART_NAMES as readonly string[]).includes(name);
}

export function defaultPaths(root = resolve(import.meta.dir, "..", "..")): InfraPaths {
  return {
    root,
    dataDir: join(root, ".data"),
    cacheDir: process.env.PSS_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "partner-syndication-service"),
  };
}

export function components(paths: InfraPaths): Component[] {
  return [postgresComponent(paths), redisComponent(paths), kafkaComponent(paths), opensearchComponent(paths)];
}

/** The components named by `parts`, or all of them when `parts` is empty or absent. */
function selected(paths: InfraPaths, parts?: readonly PartName[]): Component[] {
  const all = components(paths);
  return parts && parts.length > 0 ? all.filter((c) => parts.includes(c.name)) : all;
}

/**
 * Starts whatever is not configured in `env` and not already running (only `parts` when given), waits until
 * each of those answers, and returns every URL. Parts whose URL is set in `env` are used as they are.
 */
export async function up(
  env: Record<string, string | undefined> = process.env,
  paths = defaultPaths(),
  parts?: readonly PartName[],
): Promise<InfraUrls> {
  const local = selected(paths, parts).filter((c) => !env[c.env.name]);
  await Promise.all(
    local.map(async (c) => {
      try {
        if (!(await c.running())) await c.start();
        const deadline = Date.now() + c.readyTimeoutMs;
        while (!(await c.ready().catch(() => false))) {
          if (!(await c.running())) throw new Error(`${c.name} exited during start-up; see its log: ${c.logFile}`);
          if (Date.now() > deadline) throw new Error(`${c.name} did not answer within ${c.readyTimeoutMs / 1000} s; see its log: ${c.logFile}`);
          await Bun.sleep(300);
        }
      } catch (err) {
        throw new Error(`infra: ${c.name} failed: ${(err as Error).message}`);
      }
    }),
  );
  const urls = {} as InfraUrls;
  for (const c of components(paths)) urls[c.env.name as keyof InfraUrls] = env[c.env.name] ?? c.env.value;
  return urls;
}

/** Stops the named parts (all of them when `parts` is empty or absent); the others keep running. */
export async function down(paths = defaultPaths(), parts?: readonly PartName[]): Promise<void> {
  await Promise.all(selected(paths, parts).map((c) => c.stop()));
}

export async function status(paths = defaultPaths(), parts?: readonly PartName[]) {
  return Promise.all(
    selected(paths, parts).map(async (c) => ({
      name: c.name,
      running: await c.running(),
      ready: await c.ready().catch(() => false),
      url: c.env.value,
      log: c.logFile,
    })),
  );
}
