// Issue 39: the chart's production values installed on the real one-node Kubernetes (scripts/kubernetes/), from the
// service image in a registry (scripts/kubernetes/registry.ts, pushed as `npm run images -- --push` pushes it),
// with the servers outside the release (support/outside-servers.ts: reached by URL at the node's address, as
// managed services would be) and every credential in a Secret of the operator's (existingSecret). In one namespace
// of its own, each step timed:
//
// 1. `helm install --wait`: the migration hook Job runs first under its own ServiceAccount (itself a hook made before
//    it), then the eight services come up from the registry, pulled by digest; no credential in a ConfigMap, no hash
//    of a secret on a pod, the public and the health Services apart, the NetworkPolicies accepted.
// 2. The journey: a listing with photos searchable, its variants in the object store, a webhook received, a lead
//    e-mailed once (to this process's SMTP relay).
// 3. `helm upgrade --wait` to the next image digest (the same image plus a migration) under steady writes: 0 failed
//    requests, the migration applied by the pre-upgrade hook, every write converged.
// 4. The backup CronJob triggered once (to the object store), then the restore Job, rendered on its own, into an
//    empty database and an empty media prefix: every row and every photo variant equal.
// 5. `helm rollback` to the first revision: the first digest runs again and writes work.
// 6. `helm test`: its pod finds the schema current and the API answering.
// 7. `helm uninstall`: nothing of the release is left, only the operator's own Secrets.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { loadMigrations } from "../../packages/database/src/migrate.ts";
import { DRILL_MIGRATION } from "../../scripts/kubernetes/chart-step.ts";
import { testUrls } from "../support/env.ts";
import { tableDigests } from "../support/table-digests.ts";
import { until } from "../support/until.ts";
import { CHART } from "./support/chart.ts";
import { chartTestContext, clusterTestsUnavailable, createFirstPartner } from "./support/cluster-env.ts";
import { type Journey, type Mail, startJourney } from "./support/journey.ts";
import { type OutsideServers, startOutsideServers } from "./support/outside-servers.ts";

const REGISTRY_VARIABLES = [
  "PSS_REGISTRY_REPOSITORY",
  "PSS_REGISTRY_TAGS",
  "PSS_REGISTRY_DIGEST",
  "PSS_REGISTRY_UPGRADE_DIGEST",
] as const;
const unavailable =
  clusterTestsUnavailable() ??
  (REGISTRY_VARIABLES.find((v) => !process.env[v])
    ? `${REGISTRY_VARIABLES.find((v) => !process.env[v])} is not set (npm test's Kubernetes step pushes the image to its registry)`
    : null);
if (unavailable) console.error(`kubernetes production chart tests skipped: ${unavailable}`);
const it = unavailable ? test.skip : test;

const { token, namespace, release, prefix, timings, seconds, env, kubectl, helm, ...context } = chartTestContext(
  "prod",
  unavailable,
);
const { clusterIp } = context;
const registry = {
  repository: process.env.PSS_REGISTRY_REPOSITORY ?? "",
  tags: (process.env.PSS_REGISTRY_TAGS ?? "").split(","),
  digest: process.env.PSS_REGISTRY_DIGEST ?? "",
  upgradeDigest: process.env.PSS_REGISTRY_UPGRADE_DIGEST ?? "",
};
const COMPONENTS = ["api", "marketplace", "outbox-relay", "media", "indexer", "leads", "webhooks", "portal"] as const;
/** The Secrets the operator made: what `helm uninstall` must leave, and all it may leave. */
const OPERATOR_SECRETS = [
  "prod-database",
  "prod-redis",
  "prod-opensearch",
  "prod-s3",
  "prod-smtp",
  "prod-webhook-key",
  "restore-database",
  "prod-backup-signing-key",
];

let journey: Journey;
let servers: OutsideServers;
let sql: postgres.Sql | undefined;
let work = "";
let valuesFile = "";
let partner = { apiKey: "" };
let leadsSoFar = 0;
let webhookKey = "";

const mails = async (): Promise<Mail[]> =>
  servers.smtp.received.map((m) => ({ id: m.headers["message-id"] ?? "", to: m.envelopeTo }));

function s3Client(): Bun.S3Client {
  return new Bun.S3Client({
    endpoint: servers.s3.endpoint,
    bucket: servers.s3.env.S3_BUCKET,
    region: servers.s3.env.S3_REGION,
    ...servers.s3Credentials,
  });
}

/** Every key in the bucket under `under` (all pages). */
async function keysUnder(under: string): Promise<string[]> {
  const client = s3Client();
  const keys: string[] = [];
  let continuationToken: string | undefined;
  do {
    const page = await client.list({ prefix: under, maxKeys: 1000, continuationToken });
    keys.push(...(page.contents ?? []).map((o) => o.key));
    continuationToken = page.isTruncated ? page.nextContinuationToken : undefined;
  } while (continuationToken);
  return keys.sort();
}

/** The variant names stored under a media prefix (keys `<prefix><ab>/<name>`; backups and the rest left out). */
async function variantsUnder(mediaPrefix: string): Promise<string[]> {
  return (await keysUnder(mediaPrefix))
    .map((k) => k.slice(mediaPrefix.length))
    .filter((rest) => /^[0-9a-f]{2}\/[0-9a-f]{64}\.(webp|jpg)$/.test(rest))
    .map((rest) => rest.slice(3))
    .sort();
}

interface PodList {
  items: {
    metadata: {
      name: string;
      labels: Record<string, string>;
      deletionTimestamp?: string;
      annotations?: Record<string, string>;
    };
    spec: { containers: { image: string }[]; serviceAccountName: string };
    status: { phase: string; containerStatuses?: { imageID: string }[] };
  }[];
}

async function releasePods(): Promise<PodList["items"]> {
  const pods = JSON.parse(
    await kubectl(["get", "pods", "-l", `app.kubernetes.io/instance=${release}`, "-o", "json"]),
  ) as PodList;
  return pods.items.filter((p) => !p.metadata.deletionTimestamp && p.status.phase === "Running");
}

/** Every running service pod of each component runs `image` (pulled by that digest). */
async function expectImage(image: string): Promise<void> {
  const pods = await releasePods();
  for (const c of COMPONENTS) {
    const mine = pods.filter((p) => p.metadata.labels["app.kubernetes.io/component"] === c);
    expect([c, mine.length > 0 && mine.every((p) => p.spec.containers[0]!.image === image)]).toEqual([c, true]);
    for (const p of mine) expect(p.status.containerStatuses?.[0]?.imageID).toEndWith(image.split("@")[1]!);
  }
}

function valuesYaml(): string {
  const small = (cpu: string) => ({ requests: { cpu, memory: "128Mi" }, limits: { cpu: "1", memory: "768Mi" } });
  const values = {
    image: { repository: registry.repository, tag: registry.tags[0], digest: registry.digest },
    publicBaseUrl: `https://listings-${token}.example.com`,
    database: { existingSecret: "prod-database" },
    redis: { existingSecret: "prod-redis" },
    opensearch: { existingSecret: "prod-opensearch" },
    // One broker outside the release: one copy per partition, which production accepts only when told so.
    kafka: { brokers: servers.kafkaBrokers, replicationFactor: 1, topicPartitions: 3 },
    s3: { endpoint: servers.s3.endpoint, bucket: servers.s3.env.S3_BUCKET, existingSecret: "prod-s3" },
    smtp: { existingSecret: "prod-smtp" },
    webhookSecretKey: { existingSecret: "prod-webhook-key" },
    env: {
      OPENSEARCH_INDEX_ALIAS: servers.searchAlias,
      KAFKA_REPLICATION_FACTOR_I_UNDERSTAND: "true",
      // This process's Redis takes a password over plaintext on the node's private address: production refuses
      // that unless told the network is trusted (docs/operations.md, "Connecting to managed servers").
      REDIS_URL_I_UNDERSTAND: "true",
    },
    // The node has two cores: small requests, two API and two marketplace pods (an upgrade never leaves either
    // without a ready pod).
    services: {
      api: { replicas: 2, resources: small("50m") },
      marketplace: { replicas: 2, resources: small("50m") },
      "outbox-relay": { replicas: 1, resources: small("20m") },
      media: {
        replicas: 1,
        resources: small("50m"),
        // The photo host is this process, on the node's private address: allowed, on purpose.
        env: {
          MEDIA_ALLOWED_HOSTS: `${env!.nodeIp}:${journey.photoHost.port}`,
          MEDIA_ALLOWED_HOSTS_I_UNDERSTAND: "true",
        },
      },
      indexer: { replicas: 1, resources: small("20m") },
      leads: { replicas: 1, resources: small("20m") },
      webhooks: {
        replicas: 1,
        resources: small("20m"),
        env: {
          WEBHOOK_ALLOWED_HOSTS: `${env!.nodeIp}:${journey.receiver.port}`,
          WEBHOOK_ALLOWED_HOSTS_I_UNDERSTAND: "true",
        },
      },
    },
    // Triggered by hand below; a schedule that does not come round during the test.
    backup: {
      enabled: true,
      schedule: "0 0 1 1 *",
      destination: "s3",
      signingKey: { existingSecret: "prod-backup-signing-key" },
    },
  };
  return JSON.stringify(values, null, 2);
}

/** The values of the upgrade: the same file, the next digest. */
const nextRelease = () => ["-f", valuesFile, "--set", `image.digest=${registry.upgradeDigest}`];

async function createSecret(name: string, data: Record<string, string>): Promise<void> {
  await kubectl([
    "create",
    "secret",
    "generic",
    name,
    ...Object.entries(data).map(([k, v]) => `--from-literal=${k}=${v}`),
  ]);
}

/** A Job's completion (or its failure, with its pod's log), then its pod's log. */
/**
 * The admin command's JSON document: what ends a Job's log (stdout and stderr together, so a line of the command's
 * progress or a JSON log line may come before it). The log is shown when there is none.
 */
function commandResult(log: string): unknown {
  // stdout and stderr are two pipes the container runtime reads apart: the command's "admin: ..." lines on stderr
  // may land between the lines of its document.
  const stdout = log
    .split("\n")
    .filter((line) => !line.startsWith("admin: "))
    .join("\n");
  for (const start of [...stdout.matchAll(/^\{/gm)].map((m) => m.index!)) {
    try {
      return JSON.parse(stdout.slice(start));
    } catch {}
  }
  throw new Error(`no JSON document ends the Job's log:\n${log.slice(-3000)}`);
}

async function jobOutput(job: string, timeoutMs: number): Promise<string> {
  const done = await until(
    `job ${job} to finish`,
    async () => {
      const status = JSON.parse(await kubectl(["get", "job", job, "-o", "json"])) as {
        status: { succeeded?: number; failed?: number };
      };
      return status.status.succeeded ? "succeeded" : status.status.failed ? "failed" : null;
    },
    timeoutMs,
  );
  const log = await kubectl(["logs", `job/${job}`]);
  if (done !== "succeeded") throw new Error(`job ${job} failed: ${log.slice(-2000)}`);
  return log;
}

beforeAll(async () => {
  if (unavailable) return;
  const t0 = Date.now();
  const urls = testUrls();
  journey = await startJourney({ nodeIp: env!.nodeIp, token });
  servers = await startOutsideServers({
    nodeIp: env!.nodeIp,
    token,
    databaseUrl: urls.DATABASE_URL,
    opensearchUrl: urls.OPENSEARCH_URL,
  });
  sql = postgres(servers.localDatabaseUrl, { max: 2, onnotice: () => {} });
  await context.createNamespace();
  webhookKey = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
  await createSecret("prod-database", { url: servers.databaseUrl });
  await createSecret("prod-redis", { url: servers.redisUrl });
  await createSecret("prod-opensearch", { url: servers.opensearchUrl });
  await createSecret("prod-s3", servers.s3Credentials);
  await createSecret("prod-smtp", {
    host: env!.nodeIp,
    port: String(servers.smtp.port),
    from: servers.smtpFrom,
  });
  await createSecret("prod-webhook-key", { key: webhookKey });
  await createSecret("restore-database", { url: servers.restoreDatabaseUrl });
  await createSecret("prod-backup-signing-key", {
    key: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64"),
  });
  work = mkdtempSync(join(tmpdir(), "pss-chart-production-"));
  valuesFile = join(work, "values.json");
  writeFileSync(valuesFile, valuesYaml());
  timings.servers = seconds(t0);
}, 180_000);

afterAll(async () => {
  if (unavailable) return;
  await sql?.end({ timeout: 2 }).catch(() => {});
  await context.removeRelease();
  journey?.stop();
  await servers?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
  console.error(`kubernetes production chart timings (s): ${JSON.stringify(timings)}`);
}, 300_000);

it("helm install --wait of the production values from the registry: the migration hook runs first under its own ServiceAccount, the services pull the image by digest, credentials only in Secrets, public and health Services apart", async () => {
  const t0 = Date.now();
  const out = await context.explained(
    helm(["install", release, CHART, "-f", valuesFile, "--wait", "--timeout", "5m"], { timeoutMs: 330_000 }),
  );
  timings.install = seconds(t0);
  // NOTES.txt: the first-key command, for this release.
  expect(out).toContain(
    `kubectl -n ${namespace} exec deploy/${prefix}-api -- bun services/admin/src/cli.ts partners create`,
  );
  const image = `${registry.repository}:${registry.tags[0]}@${registry.digest}`;
  await expectImage(image);

  // The hook ran: its ServiceAccount (a hook itself, weight -20) before the Job (0); both removed once it succeeded.
  const hooks = await helm(["get", "hooks", release]);
  const saHook = hooks.split("---").find((d) => d.includes("kind: ServiceAccount"))!;
  expect(saHook).toContain(`name: ${prefix}-migrate`);
  expect(saHook).toContain('helm.sh/hook-weight: "-20"');
  const jobHook = hooks.split("---").find((d) => d.includes("kind: Job"))!;
  expect(jobHook).toContain(`serviceAccountName: ${prefix}-migrate`);
  expect(await kubectl(["get", "serviceaccount", "-o", "name"])).not.toContain(`${prefix}-migrate`);
  const applied = await sql!<{ version: string }[]>`SELECT version FROM schema_migrations ORDER BY version`;
  expect(applied.map((r) => r.version)).toEqual(loadMigrations().map((m) => m.version));

  // No credential in a ConfigMap, no hash of one on a pod; the services' own ServiceAccount.
  const configMaps = await kubectl(["get", "configmap", "-l", `app.kubernetes.io/instance=${release}`, "-o", "json"]);
  for (const credential of [servers.s3Credentials.secretAccessKey, new URL(servers.redisUrl).password, webhookKey])
    expect(configMaps).not.toContain(credential);
  expect(configMaps).not.toContain(new URL(servers.databaseUrl).password);
  for (const pod of await releasePods()) {
    const annotations = Object.keys(pod.metadata.annotations ?? {});
    expect([pod.metadata.name, annotations.filter((a) => /secret/i.test(a))]).toEqual([pod.metadata.name, []]);
    expect(pod.spec.serviceAccountName).toBe(prefix);
  }
  const services = JSON.parse(await kubectl(["get", "services", "-o", "json"])) as {
    items: { metadata: { name: string }; spec: { type: string; ports: { port: number }[] } }[];
  };
  const ports = Object.fromEntries(services.items.map((s) => [s.metadata.name, s.spec.ports.map((p) => p.port)]));
  expect(ports[`${prefix}-api`]).toEqual([8080]);
  expect(ports[`${prefix}-api-health`]).toEqual([8085]);
  expect(ports[`${prefix}-marketplace`]).toEqual([8080]);
  expect(ports[`${prefix}-marketplace-health`]).toEqual([8089]);
  for (const c of COMPONENTS) expect(ports[`${prefix}-${c}-health`]?.length).toBe(1);
  const policies = await kubectl(["get", "networkpolicy", "-o", "name"]);
  expect(policies.trim().split("\n").length).toBe(COMPONENTS.length);
}, 400_000);

it("the journey: a listing with photos becomes searchable with its variants in the object store, a webhook arrives, one lead e-mail is relayed", async () => {
  expect(timings.install).toBeGreaterThan(0);
  const t0 = Date.now();
  partner = await createFirstPartner(kubectl, prefix, `Production ${token}`);
  expect(partner.apiKey).toStartWith("pss_live_");
  await journey.setUpPartner(
    `http://${await clusterIp("api")}:8080`,
    `http://${await clusterIp("marketplace")}:8080`,
    partner.apiKey,
  );
  await journey.journey({ sql: sql!, mails, stored: async () => new Set(await variantsUnder("")) });
  leadsSoFar = 1;
  timings.journey = seconds(t0);
}, 400_000);

it("helm upgrade --wait to the next image digest under steady writes: 0 failed requests, its migration applied by the pre-upgrade hook, every write converged", async () => {
  expect(partner.apiKey).not.toBe("");
  const t0 = Date.now();
  let upgradeSeconds = 0;
  let upgradeStarted = new Date();
  const run = await journey.steadyWrites("u", 15_000, async () => {
    await Bun.sleep(3_000);
    const t1 = Date.now();
    upgradeStarted = new Date();
    await context.explained(
      helm(["upgrade", release, CHART, ...nextRelease(), "--wait", "--timeout", "5m"], { timeoutMs: 330_000 }),
    );
    upgradeSeconds = seconds(t1);
  });
  timings.upgrade = upgradeSeconds;
  console.error(
    `kubernetes production upgrade: ${run.acked.length} of ${run.attempted} writes acknowledged during ${run.seconds} s (upgrade ${upgradeSeconds} s), failures ${JSON.stringify(run.failures)}`,
  );
  expect(run.failures).toEqual([]);
  expect(run.acked.length).toBe(run.attempted);
  await expectImage(`${registry.repository}:${registry.tags[0]}@${registry.upgradeDigest}`);
  const [drill] = await sql!<{ applied_at: Date }[]>`
    SELECT applied_at FROM schema_migrations WHERE version = ${DRILL_MIGRATION.version}`;
  expect(drill?.applied_at.getTime()).toBeGreaterThanOrEqual(upgradeStarted.getTime() - 5_000);
  await journey.expectConverged({ sql: sql!, acked: run.acked, leadsBefore: leadsSoFar, leads: run.leads, mails });
  leadsSoFar += run.leads.length;
  timings.upgradeTotal = seconds(t0);
}, 600_000);

it("the backup CronJob, triggered once, writes a backup to the object store; the restore Job puts it into an empty database and media prefix: every row and every photo variant equal", async () => {
  expect(timings.upgrade).toBeGreaterThan(0);
  let t0 = Date.now();
  const source = await tableDigests(sql!);
  await kubectl(["create", "job", `--from=cronjob/${prefix}-backup`, "backup-drill"]);
  const backupLog = await jobOutput("backup-drill", 240_000);
  const backup = commandResult(backupLog) as { backup: string; rows: number };
  expect(backup.backup).toStartWith(`s3://${servers.s3.env.S3_BUCKET}/backups/`);
  expect(backup.rows).toBe(Object.values(source).reduce((n, t) => n + t.rows, 0));
  const name = backup.backup.slice(backup.backup.lastIndexOf("/") + 1);
  expect(await keysUnder(`backups/${name}/`)).toContain(`backups/${name}/manifest.json`);
  // Nothing wrote meanwhile: the backup's recovery point holds what `source` holds.
  expect(await tableDigests(sql!)).toEqual(source);
  timings.backup = seconds(t0);

  t0 = Date.now();
  const manifest = await helm(
    [
      "template",
      release,
      CHART,
      ...nextRelease(),
      "--set",
      `restore.backup=${name}`,
      "--set",
      "restore.databaseSecret=restore-database",
      "--set",
      "restore.mediaPrefix=restored/",
      "--show-only",
      "templates/restore-job.yaml",
    ],
    { timeoutMs: 60_000 },
  );
  await kubectl(["apply", "-f", "-"], { stdin: manifest });
  const job = (Bun.YAML.parse(manifest) as { metadata: { name: string } }).metadata.name;
  try {
    const restoreLog = await jobOutput(job, 240_000);
    const restored = commandResult(restoreLog) as { restoredFrom: string; rows: number };
    expect(restored.restoredFrom).toBe(backup.backup);
    const target = postgres(servers.localRestoreDatabaseUrl, { max: 1, onnotice: () => {} });
    try {
      expect(await tableDigests(target)).toEqual(source);
    } finally {
      await target.end({ timeout: 2 });
    }
    const variants = await variantsUnder("");
    expect(variants.length).toBeGreaterThan(0);
    expect(await variantsUnder("restored/")).toEqual(variants);
    const client = s3Client();
    for (const v of variants) {
      const key = `${v.slice(0, 2)}/${v}`;
      const [a, b] = await Promise.all([client.file(key).bytes(), client.file(`restored/${key}`).bytes()]);
      expect([v, Buffer.from(a).equals(Buffer.from(b))]).toEqual([v, true]);
    }
  } finally {
    // Done with it, as an operator is: the Job is no part of the release (so uninstall's check sees it gone).
    await kubectl(["delete", "job", job, "--wait=true"]);
  }
  timings.restore = seconds(t0);
}, 600_000);

it("helm rollback to the first revision: the first digest runs again and writes work", async () => {
  expect(timings.upgrade).toBeGreaterThan(0);
  const t0 = Date.now();
  await context.explained(helm(["rollback", release, "1", "--wait", "--timeout", "5m"], { timeoutMs: 330_000 }));
  timings.rollback = seconds(t0);
  await expectImage(`${registry.repository}:${registry.tags[0]}@${registry.digest}`);
  const { id, status } = await journey.putListing(`after-rollback-${token}`, `After rollback ${token}rb`, ["rb-1"]);
  expect(status).toBe(201);
  await until(
    "the listing written after the rollback to be searchable",
    () => journey.searchable(`${token}rb`, id!),
    120_000,
  );
}, 400_000);

it("helm test: its pod finds this image's schema current and the API answering through its Service", async () => {
  const t0 = Date.now();
  // Exit 0 only when the pod succeeded: `wait-main.ts schema` and a 200 from GET /v1/listings through the Service.
  const out = await helm(["test", release, "--timeout", "3m"], { timeoutMs: 200_000 });
  timings.helmTest = seconds(t0);
  expect(out).toMatch(new RegExp(`TEST SUITE:\\s+${prefix}-test[\\s\\S]*Phase:\\s+Succeeded`));
}, 300_000);

it("helm uninstall leaves nothing of the release: only the operator's own Secrets", async () => {
  const t0 = Date.now();
  await sql?.end({ timeout: 2 }).catch(() => {});
  sql = undefined;
  await helm(["uninstall", release, "--wait", "--timeout", "3m"], { timeoutMs: 200_000 });
  // Nothing of it is marked to stay here: the webhook key is the operator's Secret, backups are in the object store.
  const left = await until(
    "the release's objects to be gone",
    async () => ((await context.leftovers()).length === 0 ? "none" : null),
    180_000,
  );
  expect(left).toBe("none");
  const secrets = (await kubectl(["get", "secrets", "-o", "jsonpath={.items[*].metadata.name}"])).split(/\s+/);
  expect(secrets.filter(Boolean).sort()).toEqual([...OPERATOR_SECRETS].sort());
  expect((await kubectl(["get", "serviceaccounts", "-o", "jsonpath={.items[*].metadata.name}"])).trim()).toBe(
    "default",
  );
  timings.uninstall = seconds(t0);
}, 300_000);
