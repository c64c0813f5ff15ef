// Issue 33: the Helm chart (deploy/helm/partner-syndication-service) without a cluster: `helm lint`, `helm template`
// of the production (default) and development values, values.schema.json refusing wrong values at install time, and
// what every rendered pod gets: the environment each service's own config loader accepts (the production values
// pass the production checklist), probes on the compose health ports, grace periods of the compose stop budgets,
// and a locked-down security context. test/kubernetes/chart-cluster.test.ts installs it on a real cluster.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig as apiConfig, loadRelayConfig } from "../../services/api/src/config.ts";
import { loadConfig as indexerConfig } from "../../services/indexer/src/config.ts";
import { loadConfig as leadsConfig } from "../../services/leads/src/config.ts";
import { loadConfig as mediaConfig } from "../../services/media/src/config.ts";
import { loadConfig as webhooksConfig } from "../../services/webhooks/src/config.ts";
import { loadConfig as portalConfig } from "../../services/portal/src/config.ts";
import {
  CHART,
  DEV_VALUES,
  helm,
  helmBinary,
  PRODUCTION_SETTINGS,
  ROOT,
  type Rendered,
  template,
} from "./support/chart.ts";

const bin = helmBinary();
if (!bin)
  console.error("chart lint tests skipped: no helm (npm test builds it from the Go module proxy when Go is there)");
const it = bin ? test : test.skip;

const SERVICES = ["api", "outbox-relay", "media", "indexer", "leads", "webhooks", "portal"] as const;
type Service = (typeof SERVICES)[number];
const HEALTH_PORTS: Record<Service, number> = {
  api: 8085,
  "outbox-relay": 8084,
  media: 8081,
  indexer: 8082,
  leads: 8083,
  webhooks: 8086,
  portal: 8087,
};
const LOADERS: Record<Service, (env: Record<string, string | undefined>) => unknown> = {
  api: apiConfig,
  "outbox-relay": loadRelayConfig,
  media: mediaConfig,
  indexer: indexerConfig,
  leads: leadsConfig,
  webhooks: webhooksConfig,
  portal: portalConfig,
};
const production = PRODUCTION_SETTINGS.flatMap((s) => ["--set", s]);

function composeGraceSeconds(): Record<Service, number> {
  const compose = Bun.YAML.parse(readFileSync(join(ROOT, "docker-compose.yml"), "utf8")) as {
    services: Record<string, { stop_grace_period?: string }>;
    "x-app": { stop_grace_period: string };
  };
  return Object.fromEntries(
    SERVICES.map((s) => [
      s,
      Number.parseInt(compose.services[s]!.stop_grace_period ?? compose["x-app"].stop_grace_period, 10),
    ]),
  ) as Record<Service, number>;
}

const byKind = (docs: Rendered[], kind: string) => docs.filter((d) => d.kind === kind);
const deployment = (docs: Rendered[], service: Service) =>
  byKind(docs, "Deployment").find((d) => d.metadata.name.endsWith(`-${service}`))!;

/** The environment a service's container starts with: its ConfigMap, then its env entries (Secrets resolved). */
function containerEnv(docs: Rendered[], service: Service): Record<string, string | undefined> {
  const pod = deployment(docs, service).spec.template.spec;
  const container = pod.containers[0];
  const env: Record<string, string | undefined> = {};
  for (const from of container.envFrom ?? []) {
    const map = byKind(docs, "ConfigMap").find((c) => c.metadata.name === from.configMapRef?.name);
    Object.assign(env, map?.data ?? {});
  }
  for (const e of container.env ?? []) {
    if (e.value !== undefined) env[e.name] = String(e.value);
    const ref = e.valueFrom?.secretKeyRef;
    if (ref) {
      const secret = byKind(docs, "Secret").find((s) => s.metadata.name === ref.name);
      const value =
        secret?.stringData?.[ref.key] ??
        (secret?.data?.[ref.key] !== undefined ? Buffer.from(secret.data[ref.key]!, "base64").toString() : undefined);
      if (value === undefined && !ref.optional) throw new Error(`${service}: ${e.name} refers to a missing secret key`);
      env[e.name] = value;
    }
  }
  return env;
}

describe("the Helm chart", () => {
  it("passes helm lint with the production settings and with the development values", async () => {
    const prod = await helm(["lint", CHART, "--strict", ...production]);
    expect([prod.code, prod.err]).toEqual([0, ""]);
    const dev = await helm(["lint", CHART, "--strict", "-f", DEV_VALUES]);
    expect([dev.code, dev.err]).toEqual([0, ""]);
  });

  it("renders seven Deployments whose environment each service accepts under NODE_ENV=production, with the migration as a pre-install/pre-upgrade hook and nothing stateful", async () => {
    const docs = await template(production);
    expect(
      byKind(docs, "Deployment")
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual(SERVICES.map((s) => `pss-partner-syndication-service-${s}`).sort());
    expect(byKind(docs, "StatefulSet")).toEqual([]);
    for (const service of SERVICES) {
      const env = containerEnv(docs, service);
      expect([service, env.NODE_ENV]).toEqual([service, "production"]);
      // The service's own loader: throws, listing every problem, on what production refuses.
      expect(() => LOADERS[service](env)).not.toThrow();
    }
    expect(containerEnv(docs, "api").OUTBOX_RELAY_ENABLED).toBe("false");
    expect(containerEnv(docs, "leads").SMTP_HOST).toBe("smtp.example.com");
    // The portal e-mails sign-in links through the same relay, and serves on the port its Service names.
    expect(containerEnv(docs, "portal").SMTP_HOST).toBe("smtp.example.com");
    expect(containerEnv(docs, "portal").PORTAL_PORT).toBe("8090");
    const portalService = byKind(docs, "Service").find((s) => s.metadata.name.endsWith("-portal"))!;
    expect(portalService.spec.ports).toContainEqual({ name: "http", port: 8090, targetPort: "http" });
    // One webhook key, generated, the same for the API and the webhooks service.
    const key = containerEnv(docs, "api").WEBHOOK_SECRET_KEY!;
    expect(Buffer.from(key, "base64").length).toBe(32);
    expect(containerEnv(docs, "webhooks").WEBHOOK_SECRET_KEY).toBe(key);

    const job = byKind(docs, "Job")[0]!;
    expect(job.metadata.annotations?.["helm.sh/hook"]).toBe("pre-install,pre-upgrade");
    expect(job.spec.template.spec.containers[0].command).toEqual(["bun", "packages/database/src/migrate-main.ts"]);
    // The hook reads a hook copy of the database Secret (the release's own does not exist yet at pre-install).
    const hookSecret = byKind(docs, "Secret").find((s) => s.metadata.annotations?.["helm.sh/hook"])!;
    expect(hookSecret.metadata.annotations?.["helm.sh/hook-weight"]).toBe("-10");
    expect(job.spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name).toBe(hookSecret.metadata.name);
  });

  it("gives every service probes on its health port, a grace period of its compose stop budget plus the preStop pause, and a locked-down pod", async () => {
    const docs = await template(production);
    const grace = composeGraceSeconds();
    const text = JSON.stringify(docs);
    expect(text).not.toContain("hostPath");
    expect(text).not.toContain("nodeAffinity");
    for (const service of SERVICES) {
      const pod = deployment(docs, service).spec.template.spec;
      const c = pod.containers[0];
      const healthPort = c.ports.find((p: { name: string }) => p.name === "health").containerPort;
      expect([service, healthPort]).toEqual([service, HEALTH_PORTS[service]]);
      expect([service, c.livenessProbe.httpGet.path, c.readinessProbe.httpGet.path]).toEqual([
        service,
        "/healthz",
        "/readyz",
      ]);
      const preStop = c.lifecycle.preStop.sleep.seconds as number;
      expect(preStop).toBeGreaterThan(0);
      expect([service, pod.terminationGracePeriodSeconds]).toEqual([service, grace[service] + preStop]);
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
      expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
      expect(c.volumeMounts).toContainEqual({ name: "tmp", mountPath: "/tmp" });
      expect([pod.automountServiceAccountToken, pod.enableServiceLinks]).toEqual([false, false]);
      // Rolling updates never lower capacity: a new pod is ready before an old one stops.
      expect(deployment(docs, service).spec.strategy.rollingUpdate).toEqual({ maxSurge: 1, maxUnavailable: 0 });
      expect(pod.initContainers[0].command).toEqual(["bun", "packages/database/src/wait-main.ts", "schema", "600"]);
    }
    expect(byKind(docs, "PodDisruptionBudget").length).toBe(7);
    expect(byKind(docs, "HorizontalPodAutoscaler")).toEqual([]);
    const hpa = await template([...production, "--set", "services.media.autoscaling.enabled=true"]);
    expect(byKind(hpa, "HorizontalPodAutoscaler").map((h) => h.spec.scaleTargetRef.name)).toEqual([
      "pss-partner-syndication-service-media",
    ]);
    expect(deployment(hpa, "media").spec.replicas).toBeUndefined();
  });

  it("takes credentials from existing Secrets instead of making them", async () => {
    const docs = await template([
      ...production,
      "--set",
      "database.existingSecret=db-creds",
      "--set",
      "s3.existingSecret=s3-creds",
      "--set",
      "smtp.existingSecret=mail",
      "--set",
      "webhookSecretKey.existingSecret=hook-key",
    ]);
    expect(byKind(docs, "Secret")).toEqual([]);
    const env = deployment(docs, "api").spec.template.spec.containers[0].env as {
      name: string;
      valueFrom?: { secretKeyRef: { name: string } };
    }[];
    const secretOf = (name: string) => env.find((e) => e.name === name)?.valueFrom?.secretKeyRef.name;
    expect([secretOf("DATABASE_URL"), secretOf("S3_SECRET_ACCESS_KEY"), secretOf("WEBHOOK_SECRET_KEY")]).toEqual([
      "db-creds",
      "s3-creds",
      "hook-key",
    ]);
    expect(byKind(docs, "Job")[0]!.spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name).toBe(
      "db-creds",
    );
  });

  it("refuses to render the production values without the servers' addresses, naming what to set", async () => {
    const r = await helm(["template", "pss", CHART]);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain("is required");
  });

  it("development values: the servers in the cluster as StatefulSets with PVCs that go with the release, the SMTP sink, services finding them by DNS name", async () => {
    const docs = await template(["-f", DEV_VALUES]);
    const sets = byKind(docs, "StatefulSet");
    expect(sets.map((s) => s.metadata.name.replace("pss-partner-syndication-service-", "")).sort()).toEqual([
      "kafka",
      "opensearch",
      "postgres",
      "redis",
      "s3",
    ]);
    for (const s of sets) {
      expect(s.spec.volumeClaimTemplates.length).toBe(1);
      expect(s.spec.persistentVolumeClaimRetentionPolicy.whenDeleted).toBe("Delete");
    }
    expect(byKind(docs, "Deployment").map((d) => d.metadata.name)).toContain(
      "pss-partner-syndication-service-smtp-sink",
    );
    const env = containerEnv(docs, "indexer");
    expect(env.NODE_ENV).toBe("development");
    expect(env.KAFKA_BROKERS).toBe("pss-partner-syndication-service-kafka:9092");
    expect(env.OPENSEARCH_URL).toBe("http://pss-partner-syndication-service-opensearch:9200");
    expect(containerEnv(docs, "leads").SMTP_HOST).toBe("pss-partner-syndication-service-smtp-sink");
    for (const service of SERVICES) expect(() => LOADERS[service](containerEnv(docs, service))).not.toThrow();
    // The migration is a Job of the release (its PostgreSQL is part of it), one per revision.
    const job = byKind(docs, "Job")[0]!;
    expect(job.metadata.annotations?.["helm.sh/hook"]).toBeUndefined();
    expect(job.metadata.name).toBe("pss-partner-syndication-service-migrate-1");
    // The same development settings under NODE_ENV=production: the services refuse them.
    const refused = await template(["-f", DEV_VALUES, "--set", "nodeEnv=production"]);
    expect(() => apiConfig(containerEnv(refused, "api"))).toThrow(/development password/);
    expect(() => leadsConfig(containerEnv(refused, "leads"))).toThrow();
  });

  it("values.schema.json refuses a wrong value at install time", async () => {
    for (const [setting, field] of [
      ["services.media.replicas=-1", "replicas"],
      ["nodeEnv=prod", "nodeEnv"],
      ["services.api.replica=2", "replica"],
      ["kafka.brokers=kafka", "brokers"],
      ["publicBaseUrl=listings.example.com", "publicBaseUrl"],
      ["preStopSeconds=600", "preStopSeconds"],
    ] as const) {
      const r = await helm(["template", "pss", CHART, ...production, "--set", setting]);
      expect([setting, r.code]).toEqual([setting, 1]);
      expect(r.err).toContain("values don't meet the specifications of the schema");
      expect(r.err).toContain(field);
    }
  });
});
