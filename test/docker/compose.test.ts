// Docker sends SIGTERM, waits stop_grace_period (10 s unless set), then SIGKILLs. Each app service's
// grace period must cover its own bounded graceful shutdown, or in-flight work is cut off midway.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { shutdownBudgetMs } from "@pss/service-kit";
import { loadConfig as loadMediaConfig } from "../../services/media/src/config.ts";
import { loadConfig as loadWebhooksConfig } from "../../services/webhooks/src/config.ts";

const root = join(import.meta.dir, "..", "..");
/** Time for the process to exit and tini to pass the status on once the shutdown run has finished. */
const MARGIN_MS = 5_000;

interface ComposeService {
  command?: string[];
  stop_grace_period?: string;
  container_name?: string;
  hostname?: string;
  ports?: unknown[];
  volumes?: unknown[];
  environment?: Record<string, string | number>;
  depends_on?: Record<string, { condition: string }>;
}

/** Compose durations: "30s", "1m30s", "1h", "500ms", "2m". */
export function durationMs(value: string): number {
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== value.trim())
    throw new Error(`not a compose duration: '${value}'`);
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1, us: 0.001 };
  return parts.reduce((sum, [, n, u]) => sum + Number(n) * unit[u!]!, 0);
}

const sourceOf = (file: string) => readFileSync(join(root, file), "utf8");
const mediaDefaults = loadMediaConfig({ DATABASE_URL: "postgres://u@h/d", KAFKA_BROKERS: "h:1" });
const webhooksDefaults = loadWebhooksConfig({
  DATABASE_URL: "postgres://u@h/d",
  KAFKA_BROKERS: "h:1",
  WEBHOOK_SECRET_KEY: "a".repeat(64),
});

/**
 * Every long-running app service, its entry point, and its shutdown budget as its main.ts configures it.
 * `shutdownOptions` is what main.ts passes to runService as `shutdown:` (null: none, the defaults) and so what
 * the budget assumes: when main.ts changes it, this test fails until the budget here (and the grace period in
 * compose) are brought up to date.
 */
const APP_SERVICES = [
  { name: "api", main: "services/api/src/main.ts", shutdownOptions: null, budgetMs: shutdownBudgetMs() },
  {
    name: "marketplace",
    main: "services/marketplace/src/main.ts",
    shutdownOptions: null,
    budgetMs: shutdownBudgetMs(),
  },
  { name: "outbox-relay", main: "services/api/src/relay-main.ts", shutdownOptions: null, budgetMs: shutdownBudgetMs() },
  { name: "indexer", main: "services/indexer/src/main.ts", shutdownOptions: null, budgetMs: shutdownBudgetMs() },
  { name: "leads", main: "services/leads/src/main.ts", shutdownOptions: null, budgetMs: shutdownBudgetMs() },
  { name: "portal", main: "services/portal/src/main.ts", shutdownOptions: null, budgetMs: shutdownBudgetMs() },
  {
    name: "media",
    main: "services/media/src/main.ts",
    shutdownOptions: "shutdown: { stepTimeoutMs: config.totalTimeoutMs + 10_000 }",
    budgetMs: shutdownBudgetMs({ stepTimeoutMs: mediaDefaults.totalTimeoutMs + 10_000 }),
  },
  {
    name: "webhooks",
    main: "services/webhooks/src/main.ts",
    shutdownOptions: "shutdown: { stepTimeoutMs: config.timeoutMs + 10_000 }",
    budgetMs: shutdownBudgetMs({ stepTimeoutMs: webhooksDefaults.timeoutMs + 10_000 }),
  },
];

/** One line per app service whose grace period does not cover its shutdown budget plus the margin. */
export function shortGracePeriods(composeYaml: string, services = APP_SERVICES): string[] {
  const compose = Bun.YAML.parse(composeYaml) as { services: Record<string, ComposeService> };
  return services.flatMap((svc) => {
    const grace = compose.services[svc.name]?.stop_grace_period;
    const graceMs = grace === undefined ? 10_000 : durationMs(grace);
    if (graceMs >= svc.budgetMs + MARGIN_MS) return [];
    return [
      `${svc.name}: stop_grace_period ${grace ?? "unset (Docker's 10 s)"} < shutdown budget ${svc.budgetMs / 1000} s + ${MARGIN_MS / 1000} s`,
    ];
  });
}

const composeYaml = sourceOf("docker-compose.yml");
const compose = Bun.YAML.parse(composeYaml) as { services: Record<string, ComposeService> };

test("durationMs reads compose durations and refuses anything else", () => {
  expect(durationMs("30s")).toBe(30_000);
  expect(durationMs("1m30s")).toBe(90_000);
  expect(durationMs("500ms")).toBe(500);
  expect(() => durationMs("30")).toThrow();
  expect(() => durationMs("30 seconds")).toThrow();
});

test("the budgets used below are the ones each main.ts configures", () => {
  const drifted = APP_SERVICES.filter((svc) => {
    const main = sourceOf(svc.main);
    return svc.shutdownOptions === null ? /\bshutdown:/.test(main) : !main.includes(svc.shutdownOptions);
  }).map((svc) => `${svc.main} no longer passes ${svc.shutdownOptions ?? "no shutdown options"} to runService`);
  expect(drifted).toEqual([]);
  // runService hands those options to createShutdown unchanged.
  expect(sourceOf("packages/service-kit/src/run-service.ts")).toContain("createShutdown(logger, parts.shutdown)");
  expect(APP_SERVICES.find((s) => s.name === "media")!.budgetMs).toBe(35_000);
});

test("every long-running app service in compose is one whose shutdown budget is known here", () => {
  const running = Object.entries(compose.services)
    .filter(([, s]) => s.command?.[0] === "bun" && s.command[1]?.startsWith("services/"))
    .map(([name, s]) => ({ name, main: s.command![1] }));
  expect(running.sort((a, b) => a.name.localeCompare(b.name))).toEqual(
    APP_SERVICES.map(({ name, main }) => ({ name, main })).sort((a, b) => a.name.localeCompare(b.name)),
  );
});

test("each app service's stop_grace_period exceeds its graceful shutdown budget by the margin", () => {
  expect(shortGracePeriods(composeYaml)).toEqual([]);
});

test("a service left at Docker's default 10 s, or given less than its budget, is reported", () => {
  const yaml = `
x-app: &app
  image: pss
services:
  api:
    <<: *app
  media:
    <<: *app
    stop_grace_period: 30s
  indexer:
    <<: *app
    stop_grace_period: 1m
`;
  const only = APP_SERVICES.filter((s) => ["api", "media", "indexer"].includes(s.name));
  expect(shortGracePeriods(yaml, only)).toEqual([
    "api: stop_grace_period unset (Docker's 10 s) < shutdown budget 25 s + 5 s",
    "media: stop_grace_period 30s < shutdown budget 35 s + 5 s",
  ]);
});

test("the API, the webhooks service, the portal (secret rotation) and the admin CLI (backup) read the one WEBHOOK_SECRET_KEY the webhook-key service generates, and start after it", () => {
  const key = compose.services["webhook-key"]!;
  expect(key.command?.join(" ")).toContain("randomBytes(32)");
  expect(key.volumes).toEqual(["webhook-key:/run/pss-keys"]);
  for (const name of ["api", "webhooks", "portal", "admin"]) {
    const s = compose.services[name]!;
    expect([name, s.environment?.WEBHOOK_SECRET_KEY_FILE]).toEqual([name, "/run/pss-keys/webhook-secret-key"]);
    expect([name, s.environment?.WEBHOOK_SECRET_KEY]).toEqual([name, undefined]);
    expect([name, s.volumes]).toEqual([name, ["webhook-key:/run/pss-keys:ro", TLS_VOLUME]]);
    expect([name, s.depends_on?.["webhook-key"]?.condition]).toEqual([name, "service_completed_successfully"]);
  }
});

/** The TLS files of the operator's own servers, read-only in every app container (docs/operations.md). */
const TLS_VOLUME = "${PSS_TLS_DIR:-./deploy/compose-tls}:/run/pss-tls:ro";

test("every app container sees the operator's TLS files read-only at /run/pss-tls", () => {
  for (const name of ["migrate", "api", "outbox-relay", "media", "indexer", "leads", "webhooks", "admin"])
    expect([name, compose.services[name]?.volumes?.includes(TLS_VOLUME)]).toEqual([name, true]);
});

// `docker compose up --scale media=3 --scale indexer=2`: a replica of a scaled service must not need anything
// only one container can have (a fixed name or hostname, a host port, a volume of its own: variants live in the
// object store), and the consumer groups must be the default ones, so the replicas share the partitions.
const SCALABLE = ["media", "indexer", "leads", "outbox-relay"];

test("the workers scale with --scale: no fixed container name, hostname or host port, no volume, one shared consumer group", () => {
  const problems = SCALABLE.flatMap((name) => {
    const s = compose.services[name];
    if (!s) return [`${name}: not in docker-compose.yml`];
    const found: string[] = [];
    if (s.container_name) found.push(`${name}: container_name ${s.container_name}`);
    if (s.hostname) found.push(`${name}: hostname ${s.hostname}`);
    if (s.ports?.length) found.push(`${name}: publishes ${JSON.stringify(s.ports)}`);
    // The TLS files' directory is read-only and the same for every replica (a bind mount, not a volume of its own).
    const own = (s.volumes ?? []).filter((v) => v !== TLS_VOLUME);
    if (own.length) found.push(`${name}: volumes ${JSON.stringify(own)}`);
    for (const v of ["MEDIA_CONSUMER_GROUP", "INDEXER_GROUP_ID", "LEADS_GROUP_PREFIX", "HOSTNAME"])
      if (s.environment?.[v] !== undefined) found.push(`${name}: sets ${v}`);
    return found;
  });
  expect(problems).toEqual([]);
  // Variants go to the object store, which every replica (on any host) reaches.
  expect(compose.services.media!.environment!.MEDIA_STORAGE).toBe("s3");
});

test("the README and docker-compose.yml show how to scale the workers", () => {
  const command = "docker compose up -d --build --scale media=3 --scale indexer=2";
  expect(sourceOf("README.md")).toContain(command);
  expect(composeYaml).toContain(command);
});
