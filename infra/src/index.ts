import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { Component, InfraPaths } from "./component.ts";
import { kafkaComponent } from "./kafka.ts";
import { opensearchComponent } from "./opensearch.ts";
import { postgresComponent } from "./postgres.ts";
import { redisComponent } from "./redis.ts";
import { s3Component } from "./s3.ts";
import { kafkaClusterComponent } from "./secured/kafka-cluster.ts";
import type { SecuredProfile } from "./secured/profile.ts";
import { zipkinComponent } from "./zipkin.ts";

export type { Component, InfraPaths } from "./component.ts";
export { makeCertificateAuthority } from "./secured/certificates.ts";
export { type KafkaCluster, type KafkaNode, kafkaClusterComponent } from "./secured/kafka-cluster.ts";
export {
  SECURED_PORTS,
  SECURED_USERS,
  securedProfile,
  type SecuredPorts,
  type SecuredProfile,
} from "./secured/profile.ts";

export { LOCAL_S3, S3_PORT } from "./s3.ts";
export { ZIPKIN_PORT } from "./zipkin.ts";
export { ensureOpenssl, TEST_TOOLS, type TestTool, testToolBinary } from "./system-packages.ts";

export const URL_VARIABLES = ["DATABASE_URL", "REDIS_URL", "KAFKA_BROKERS", "OPENSEARCH_URL", "S3_ENDPOINT"] as const;
/** What goes with S3_ENDPOINT: taken from the local server when it is used, from the environment otherwise. */
export const S3_VARIABLES = ["S3_BUCKET", "S3_REGION", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY"] as const;
type ServerUrl = Exclude<(typeof URL_VARIABLES)[number], "S3_ENDPOINT">;
/**
 * Every server's URL; the object store's (S3_ENDPOINT and its bucket and credentials) is absent only with
 * MEDIA_STORAGE=local, where nothing stores variants in it.
 */
export type InfraUrls = Record<ServerUrl, string> &
  Partial<Record<"S3_ENDPOINT" | (typeof S3_VARIABLES)[number], string>>;

export const PART_NAMES = ["postgres", "redis", "kafka", "opensearch", "s3", "zipkin"] as const;
/** Parts `up` starts only when named (the trace store: `npm start` names it unless PSS_ZIPKIN=0). */
const ON_REQUEST: readonly PartName[] = ["zipkin"];
export type PartName = (typeof PART_NAMES)[number];

export function isPartName(name: string): name is PartName {
  return (PART_NAMES as readonly string[]).includes(name);
}

export function defaultPaths(root = resolve(import.meta.dir, "..", "..")): InfraPaths {
  return {
    root,
    dataDir: join(root, ".data"),
    cacheDir:
      process.env.PSS_CACHE_DIR ??
      join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "partner-syndication-service"),
  };
}

/** The default profile's servers (Zipkin only on request), or with `secured` that profile's four (no object store). */
export function components(paths: InfraPaths, secured?: SecuredProfile): Component[] {
  if (secured)
    return [
      postgresComponent(paths, secured),
      redisComponent(paths, secured),
      kafkaClusterComponent(paths, secured),
      opensearchComponent(paths, secured),
    ];
  return [
    postgresComponent(paths),
    redisComponent(paths),
    kafkaComponent(paths),
    opensearchComponent(paths),
    s3Component(paths),
    zipkinComponent(paths),
  ];
}

/** Whether the environment leaves a part to the runner: its URL is not set, and it is needed at all. */
function leftToRunner(
  c: Component,
  env: Record<string, string | undefined>,
  parts: readonly PartName[] | undefined,
): boolean {
  if (env[c.env.name]) return false;
  if (ON_REQUEST.includes(c.name) && !parts?.includes(c.name)) return false;
  // Variants kept in a local directory need no object store.
  return !(c.name === "s3" && env.MEDIA_STORAGE === "local");
}

/** The components named by `parts`, or all of them when `parts` is empty or absent. */
function selected(paths: InfraPaths, parts?: readonly PartName[], secured?: SecuredProfile): Component[] {
  const all = components(paths, secured);
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
  secured?: SecuredProfile,
): Promise<InfraUrls> {
  const local = selected(paths, parts, secured).filter((c) => leftToRunner(c, env, parts));
  await Promise.all(
    local.map(async (c) => {
      try {
        if (!(await c.running())) await c.start();
        const deadline = Date.now() + c.readyTimeoutMs;
        while (!(await c.ready().catch(() => false))) {
          if (!(await c.running())) throw new Error(`${c.name} exited during start-up; see its log: ${c.logFile}`);
          if (Date.now() > deadline)
            throw new Error(`${c.name} did not answer within ${c.readyTimeoutMs / 1000} s; see its log: ${c.logFile}`);
          await Bun.sleep(300);
        }
      } catch (err) {
        throw new Error(`infra: ${c.name} failed: ${(err as Error).message}`);
      }
    }),
  );
  const urls: Record<string, string> = {};
  for (const c of components(paths, secured)) {
    if (env[c.env.name]) {
      urls[c.env.name] = env[c.env.name]!;
      // A configured object store comes with its own bucket and credentials (whatever of them is set).
      if (c.name === "s3") for (const v of S3_VARIABLES) if (env[v]) urls[v] = env[v]!;
    } else if (leftToRunner(c, env, parts)) {
      urls[c.env.name] = c.env.value;
      Object.assign(urls, c.companions);
    }
  }
  return urls as InfraUrls;
}

/** Stops the named parts (all of them when `parts` is empty or absent); the others keep running. */
export async function down(
  paths = defaultPaths(),
  parts?: readonly PartName[],
  secured?: SecuredProfile,
): Promise<void> {
  await Promise.all(selected(paths, parts, secured).map((c) => c.stop()));
}

export async function status(paths = defaultPaths(), parts?: readonly PartName[], secured?: SecuredProfile) {
  const named = parts && parts.length > 0;
  // An optional part that is not running is not reported as down unless it is named.
  const shown = [];
  for (const c of selected(paths, parts, secured))
    if (named || !ON_REQUEST.includes(c.name) || (await c.running())) shown.push(c);
  return Promise.all(
    shown.map(async (c) => ({
      name: c.name,
      running: await c.running(),
      ready: await c.ready().catch(() => false),
      url: c.env.value,
      log: c.logFile,
    })),
  );
}
