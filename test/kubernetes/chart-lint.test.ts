// Issue 33: the Helm chart (deploy/helm/partner-syndication-service) without a cluster: `helm lint`, `helm template`
// of the production (default) and development values, values.schema.json refusing wrong values at install time, and
// what every rendered pod gets: the environment each service's own config loader accepts (the production values
// pass the production checklist), probes on the compose health ports, grace periods of the compose stop budgets,
// and a locked-down security context. test/kubernetes/chart-cluster.test.ts installs it on a real cluster.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig as apiConfig, loadRelayConfig } from "../../services/api/src/config.ts";
import { loadConfig as marketplaceConfig } from "../../services/marketplace/src/config.ts";
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

const SERVICES = ["api", "marketplace", "outbox-relay", "media", "indexer", "leads", "webhooks", "portal"] as const;
/** The services with a public port (and Service), the rest are workers. */
const PUBLIC: readonly Service[] = ["api", "marketplace", "portal"];
type Service = (typeof SERVICES)[number];
const HEALTH_PORTS: Record<Service, number> = {
  api: 8085,
  marketplace: 8089,
  "outbox-relay": 8084,
  media: 8081,
  indexer: 8082,
  leads: 8083,
  webhooks: 8086,
  portal: 8087,
};
const LOADERS: Record<Service, (env: Record<string, string | undefined>) => unknown> = {
  api: apiConfig,
  marketplace: marketplaceConfig,
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

/** The value under `key` of a Secret the chart renders (stringData or data). */
function secretValue(docs: Rendered[], name: string, key: string): string | undefined {
  const secret = byKind(docs, "Secret").find((s) => s.metadata.name === name);
  return (
    secret?.stringData?.[key] ??
    (secret?.data?.[key] !== undefined ? Buffer.from(secret.data[key]!, "base64").toString() : undefined)
  );
}

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
      const value = secretValue(docs, ref.name, ref.key);
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
    expect(containerEnv(docs, "leads").SMTP_FROM).toBe("Listings <leads@example.com>");
    expect(containerEnv(docs, "api").KAFKA_REPLICATION_FACTOR).toBe("3");
    // The portal e-mails sign-in links through the same relay, and serves on the port its Service names.
    expect(containerEnv(docs, "portal").SMTP_HOST).toBe("smtp.example.com");
    expect(containerEnv(docs, "portal").PORTAL_PORT).toBe("8090");
    // One webhook key, the one given, the same for the API and the webhooks service.
    const key = containerEnv(docs, "api").WEBHOOK_SECRET_KEY!;
    expect(Buffer.from(key, "base64").length).toBe(32);
    expect(`webhookSecretKey.value=${key}`).toBe(PRODUCTION_SETTINGS.at(-1)!);
    expect(containerEnv(docs, "webhooks").WEBHOOK_SECRET_KEY).toBe(key);
    expect(containerEnv(docs, "portal").WEBHOOK_SECRET_KEY).toBe(key);

    const job = byKind(docs, "Job")[0]!;
    expect(job.metadata.annotations?.["helm.sh/hook"]).toBe("pre-install,pre-upgrade");
    expect(job.spec.template.spec.containers[0].command).toEqual(["bun", "packages/database/src/migrate-main.ts"]);
    // The hook reads a hook copy of the database Secret (the release's own does not exist yet at pre-install).
    const hookSecret = byKind(docs, "Secret").find((s) => s.metadata.annotations?.["helm.sh/hook"])!;
    expect(hookSecret.metadata.annotations?.["helm.sh/hook-weight"]).toBe("-10");
    expect(job.spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name).toBe(hookSecret.metadata.name);
  });

  it("behind the Ingress, the marketplace believes the forwarded address of the proxies in services.marketplace.trustProxyCidrs (private ranges by default)", async () => {
    // Issue 37, item 5: without it every buyer had the ingress controller's address.
    const byDefault = containerEnv(await template(production), "marketplace");
    expect(byDefault.TRUST_PROXY_CIDRS).toBe("10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7");
    const config = marketplaceConfig(byDefault);
    expect(config.trustedProxies.trusts("10.42.0.17")).toBe(true);
    expect(config.trustedProxies.trusts("203.0.113.9")).toBe(false);
    const narrowed = containerEnv(
      await template([...production, "--set", "services.marketplace.trustProxyCidrs=10.42.0.0/16\\,2001:db8:cd::/48"]),
      "marketplace",
    );
    expect(narrowed.TRUST_PROXY_CIDRS).toBe("10.42.0.0/16,2001:db8:cd::/48");
    expect(marketplaceConfig(narrowed).trustedProxies.ranges).toEqual(["10.42.0.0/16", "2001:db8:cd::/48"]);
    const none = containerEnv(
      await template([...production, "--set", "services.marketplace.trustProxyCidrs="]),
      "marketplace",
    );
    expect(marketplaceConfig(none).trustedProxies.ranges).toEqual([]);
  });

  it("the migration hook runs as a ServiceAccount of its own, itself a hook made before the hook Secret and the Job (a pre-install hook runs before the release's own ServiceAccount exists)", async () => {
    const docs = await template(production);
    const accounts = byKind(docs, "ServiceAccount");
    const hookAccount = accounts.find((a) => a.metadata.annotations?.["helm.sh/hook"])!;
    expect(hookAccount.metadata.name).toBe("pss-partner-syndication-service-migrate");
    expect(hookAccount.metadata.annotations?.["helm.sh/hook"]).toBe("pre-install,pre-upgrade");
    const weight = (d: Rendered) => Number(d.metadata.annotations?.["helm.sh/hook-weight"]);
    const hookSecret = byKind(docs, "Secret").find((s) => s.metadata.annotations?.["helm.sh/hook"])!;
    const job = byKind(docs, "Job")[0]!;
    expect(weight(hookAccount)).toBeLessThan(weight(hookSecret));
    expect(weight(hookSecret)).toBeLessThan(weight(job));
    expect(job.spec.template.spec.serviceAccountName).toBe(hookAccount.metadata.name);
    // The services run as the release's own ServiceAccount, never the hook's (removed once the hook succeeded).
    for (const service of SERVICES)
      expect(deployment(docs, service).spec.template.spec.serviceAccountName).toBe("pss-partner-syndication-service");

    // serviceAccount.annotations (workload identity) on both; create=false: every pod runs as the given one.
    const annotated = await template([
      ...production,
      "--set",
      "serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=arn:aws:iam::1:role/pss",
    ]);
    for (const a of byKind(annotated, "ServiceAccount"))
      expect(a.metadata.annotations?.["eks.amazonaws.com/role-arn"]).toBe("arn:aws:iam::1:role/pss");
    const own = await template([
      ...production,
      "--set",
      "serviceAccount.create=false",
      "--set",
      "serviceAccount.name=pss-runner",
    ]);
    expect(byKind(own, "ServiceAccount")).toEqual([]);
    expect(byKind(own, "Job")[0]!.spec.template.spec.serviceAccountName).toBe("pss-runner");
    expect(deployment(own, "media").spec.template.spec.serviceAccountName).toBe("pss-runner");
    const missing = await helm(["template", "pss", CHART, ...production, "--set", "serviceAccount.create=false"]);
    expect(missing.err).toContain("serviceAccount.name is required with serviceAccount.create=false");
  });

  it("renders byte for byte the same twice from the same values (helm template under Argo CD or Flux): no generated key, no random value", async () => {
    const a = await helm(["template", "pss", CHART, ...production]);
    const b = await helm(["template", "pss", CHART, ...production]);
    expect(a.code).toBe(0);
    expect(a.out).toBe(b.out);
    const existing = [...production.slice(0, -2), "--set", "webhookSecretKey.existingSecret=hook-key"];
    expect((await helm(["template", "pss", CHART, ...existing])).out).toBe(
      (await helm(["template", "pss", CHART, ...existing])).out,
    );
  });

  it("production refuses to render without a webhook key given (a generated one would change at every GitOps render) and without the SMTP sender", async () => {
    const noKey = await helm(["template", "pss", CHART, ...production.slice(0, -2)]);
    expect(noKey.code).toBe(1);
    expect(noKey.err).toContain(
      "webhookSecretKey.value or webhookSecretKey.existingSecret is required with nodeEnv=production",
    );
    const withoutFrom = production.flatMap((a, i) =>
      a.startsWith("smtp.from=") ? [] : production[i + 1]?.startsWith("smtp.from=") ? [] : [a],
    );
    const noFrom = await helm(["template", "pss", CHART, ...withoutFrom]);
    expect(noFrom.code).toBe(1);
    expect(noFrom.err).toContain("smtp.from (or smtp.existingSecret) is required with nodeEnv=production");
    // Development still generates its key and keeps its sender default.
    const dev = await template(["-f", DEV_VALUES]);
    expect(Buffer.from(containerEnv(dev, "api").WEBHOOK_SECRET_KEY!, "base64").length).toBe(32);
    expect(containerEnv(dev, "leads").SMTP_FROM).toBe("leads@pss.local");
  });

  it("keeps every value that may carry a credential in a Secret, and restarts pods on a change without publishing a hash of the secret values", async () => {
    const settings = [
      ...production,
      "--set",
      "redis.url=redis://:redis-password@redis.example.com:6379",
      "--set",
      "opensearch.url=https://os-user:os-password@search.example.com",
      "--set",
      "env.SOME_TOKEN=env-secret-value",
      "--set",
      "services.media.env.MEDIA_TOKEN=media-secret-value",
    ];
    const docs = await template(settings);
    const configMaps = JSON.stringify(byKind(docs, "ConfigMap"));
    const pods = JSON.stringify(byKind(docs, "Deployment"));
    for (const secret of [
      "redis-password",
      "os-password",
      "env-secret-value",
      "media-secret-value",
      "a-real-password",
    ]) {
      expect([secret, configMaps.includes(secret), pods.includes(secret)]).toEqual([secret, false, false]);
    }
    expect(containerEnv(docs, "api").REDIS_URL).toBe("redis://:redis-password@redis.example.com:6379");
    expect(containerEnv(docs, "indexer").OPENSEARCH_URL).toBe("https://os-user:os-password@search.example.com");
    expect(containerEnv(docs, "api").SOME_TOKEN).toBe("env-secret-value");
    expect(containerEnv(docs, "media").MEDIA_TOKEN).toBe("media-secret-value");
    expect(containerEnv(docs, "api").MEDIA_TOKEN).toBeUndefined();

    const annotations = (d: Rendered[]) =>
      deployment(d, "api").spec.template.metadata.annotations as Record<string, string>;
    const secretsText = (await helm(["template", "pss", CHART, ...settings, "--show-only", "templates/secrets.yaml"]))
      .out;
    const fingerprint = annotations(docs)["fingerprint/secrets"]!;
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.keys(annotations(docs))).not.toContain("checksum/secrets");
    // Not a bare hash of what the Secrets hold: keyed with the webhook key, which readers of pods do not have.
    expect(fingerprint).not.toBe(new Bun.CryptoHasher("sha256").update(secretsText).digest("hex"));
    // A credential change restarts the pods; the same values do not.
    const changed = await template([
      ...settings,
      "--set",
      "database.url=postgres://pss:another-password@db.example.com:5432/pss",
    ]);
    expect(annotations(changed)["fingerprint/secrets"]).not.toBe(fingerprint);
    expect(annotations(await template(settings))["fingerprint/secrets"]).toBe(fingerprint);
    // With the key in a Secret of yours there is nothing to key it with: no fingerprint, rollout.generation instead.
    const own = await template([
      ...production.slice(0, -2),
      "--set",
      "webhookSecretKey.existingSecret=hook-key",
      "--set",
      "rollout.generation=3",
    ]);
    expect(annotations(own)["fingerprint/secrets"]).toBeUndefined();
    expect(annotations(own)["rollout/generation"]).toBe("3");
    expect(annotations(own)["checksum/config"]).toMatch(/^[0-9a-f]{64}$/);
  });

  it("keeps public traffic and monitoring apart: the API's, the marketplace's and the portal's Services have only their public port, every service a ClusterIP health Service, and a NetworkPolicy (on by default) admits only the ingress controller and the monitoring namespace", async () => {
    const docs = await template([...production, "--set", "services.api.service.type=LoadBalancer"]);
    const services = Object.fromEntries(byKind(docs, "Service").map((s) => [s.metadata.name, s.spec]));
    const api = services["pss-partner-syndication-service-api"]!;
    expect([api.type, api.ports.map((p: { port: number }) => p.port)]).toEqual(["LoadBalancer", [8080]]);
    const marketplace = services["pss-partner-syndication-service-marketplace"]!;
    expect([marketplace.type, marketplace.ports]).toEqual([
      "ClusterIP",
      [{ name: "http", port: 8080, targetPort: "http" }],
    ]);
    expect(deployment(docs, "marketplace").spec.template.spec.containers[0].ports).toEqual([
      { name: "http", containerPort: 8088 },
      { name: "health", containerPort: 8089 },
    ]);
    const portal = services["pss-partner-syndication-service-portal"]!;
    expect([portal.type, portal.ports]).toEqual(["ClusterIP", [{ name: "http", port: 8090, targetPort: "http" }]]);
    expect(deployment(docs, "portal").spec.template.spec.containers[0].ports).toEqual([
      { name: "http", containerPort: 8090 },
      { name: "health", containerPort: 8087 },
    ]);
    for (const service of SERVICES) {
      const health = services[`pss-partner-syndication-service-${service}-health`]!;
      expect([service, health.type, health.ports.map((p: { port: number }) => p.port)]).toEqual([
        service,
        "ClusterIP",
        [HEALTH_PORTS[service]],
      ]);
    }
    const policies = Object.fromEntries(
      byKind(docs, "NetworkPolicy").map((p) => [
        p.metadata.name.replace("pss-partner-syndication-service-", ""),
        p.spec,
      ]),
    );
    expect(Object.keys(policies).sort()).toEqual([...SERVICES].sort());
    const rules = (name: string) =>
      policies[name].ingress.map((r: { ports: { port: string }[]; from: unknown[] }) => ({
        port: r.ports[0]!.port,
        from: JSON.stringify(r.from),
      }));
    for (const name of PUBLIC) {
      expect(policies[name].podSelector.matchLabels["app.kubernetes.io/component"]).toBe(name);
      const publicRules = rules(name);
      expect(publicRules.map((r: { port: string }) => r.port)).toEqual(["http", "health"]);
      expect(publicRules[0].from).toContain("ingress-nginx");
      expect(publicRules[1].from).toContain("monitoring");
      expect(publicRules[1].from).not.toContain("ingress-nginx");
    }
    for (const worker of SERVICES.filter((s) => !PUBLIC.includes(s)))
      expect([worker, rules(worker).map((r: { port: string }) => r.port)]).toEqual([worker, ["health"]]);
    const off = await template([...production, "--set", "networkPolicy.enabled=false"]);
    expect(byKind(off, "NetworkPolicy")).toEqual([]);
  });

  it("optional Ingress (host from publicBaseUrl), ServiceMonitor, trusted proxy ranges, and an image pinned by digest", async () => {
    const plain = await template(production);
    expect(byKind(plain, "Ingress")).toEqual([]);
    expect(byKind(plain, "ServiceMonitor")).toEqual([]);
    expect(deployment(plain, "api").spec.template.spec.containers[0].image).toBe("partner-syndication-service:0.1.0");
    const digest = `sha256:${"a".repeat(64)}`;
    const docs = await template([
      ...production,
      "--set",
      "ingress.enabled=true",
      "--set",
      "ingress.className=nginx",
      "--set",
      "ingress.tlsSecretName=listings-tls",
      "--set",
      "serviceMonitor.enabled=true",
      "--set",
      "services.marketplace.trustProxyCidrs=10.42.0.0/16\\,fd00::/8",
      "--set",
      "image.repository=registry.example.com/partner-syndication-service",
      "--set",
      "image.tag=1.4.0",
      "--set",
      `image.digest=${digest}`,
    ]);
    const [ingress] = byKind(docs, "Ingress");
    expect(ingress!.spec.rules[0].host).toBe("listings.example.com");
    expect(ingress!.spec.tls[0].secretName).toBe("listings-tls");
    // The rule every balancer follows (@pss/contracts site-routing.ts): the partner API's paths, the portal's, then the rest.
    expect(
      ingress!.spec.rules[0].http.paths.map(
        (p: { path: string; pathType: string; backend: { service: { name: string; port: unknown } } }) => [
          p.path,
          p.pathType,
          p.backend.service.name.replace("pss-partner-syndication-service-", ""),
          p.backend.service.port,
        ],
      ),
    ).toEqual([
      ["/partner/", "Prefix", "api", { name: "http" }],
      ["/docs", "Exact", "api", { name: "http" }],
      ["/portal", "Prefix", "portal", { name: "http" }],
      ["/", "Prefix", "marketplace", { name: "http" }],
    ]);
    const [monitor] = byKind(docs, "ServiceMonitor");
    expect(monitor!.spec.endpoints[0]).toMatchObject({ port: "health", path: "/metrics" });
    const monitored = byKind(docs, "Service").filter((s) =>
      Object.entries(monitor!.spec.selector.matchLabels).every(([k, v]) => s.metadata.labels?.[k] === v),
    );
    expect(monitored.map((s) => s.metadata.name).sort()).toEqual(
      SERVICES.map((s) => `pss-partner-syndication-service-${s}-health`).sort(),
    );
    expect(containerEnv(docs, "marketplace").TRUST_PROXY_CIDRS).toBe("10.42.0.0/16,fd00::/8");
    expect(containerEnv(docs, "api").TRUST_PROXY_CIDRS).toBeUndefined();
    expect(containerEnv(docs, "media").TRUST_PROXY_CIDRS).toBeUndefined();
    for (const service of SERVICES)
      expect(deployment(docs, service).spec.template.spec.containers[0].image).toBe(
        `registry.example.com/partner-syndication-service:1.4.0@${digest}`,
      );
    expect(byKind(docs, "Job")[0]!.spec.template.spec.containers[0].image).toContain(`@${digest}`);
    const bad = await helm(["template", "pss", CHART, ...production, "--set", "image.digest=latest"]);
    expect(bad.err).toContain("digest");
  });

  it("pod templates carry the app.kubernetes.io labels, and each service takes its own scheduling and resources", async () => {
    const docs = await template([
      ...production,
      "--set",
      "priorityClassName=pss-normal",
      "--set",
      "services.media.priorityClassName=pss-batch",
      "--set",
      "services.media.nodeSelector.pool=media",
      "--set",
      "services.indexer.tolerations[0].key=dedicated",
      "--set",
      "services.indexer.tolerations[0].operator=Exists",
      "--set",
      "services.api.topologySpreadConstraints[0].maxSkew=1",
      "--set",
      "services.api.topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone",
      "--set",
      "services.api.topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway",
      "--set",
      "services.leads.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight=1",
      "--set",
      "services.leads.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey=kubernetes.io/hostname",
      "--set",
      "services.webhooks.resources.limits.memory=1Gi",
    ]);
    for (const service of SERVICES) {
      const labels = deployment(docs, service).spec.template.metadata.labels;
      expect(labels).toMatchObject({
        "app.kubernetes.io/name": "partner-syndication-service",
        "app.kubernetes.io/instance": "pss",
        "app.kubernetes.io/version": "0.1.0",
        "app.kubernetes.io/managed-by": "Helm",
        "app.kubernetes.io/component": service,
      });
    }
    const spec = (s: Service) => deployment(docs, s).spec.template.spec;
    expect([spec("media").priorityClassName, spec("api").priorityClassName]).toEqual(["pss-batch", "pss-normal"]);
    expect(spec("media").nodeSelector).toEqual({ pool: "media" });
    expect(spec("api").nodeSelector).toBeUndefined();
    expect(spec("indexer").tolerations).toEqual([{ key: "dedicated", operator: "Exists" }]);
    expect(spec("api").topologySpreadConstraints[0].topologyKey).toBe("topology.kubernetes.io/zone");
    expect(spec("leads").affinity.podAntiAffinity).toBeDefined();
    expect(spec("media").affinity).toBeUndefined();
    expect(spec("webhooks").containers[0].resources.limits.memory).toBe("1Gi");
    expect(spec("leads").containers[0].resources.limits.memory).toBe("768Mi");
  });

  it("the backup CronJob is off by default; on, it backs up to the object store or a kept PVC; the restore Job renders only for a named backup, into the database and media prefix given", async () => {
    expect(byKind(await template(production), "CronJob")).toEqual([]);
    const unsealed = await helm(["template", "pss", CHART, ...production, "--set", "backup.enabled=true"]);
    expect(unsealed.err).toContain("backup.signingKey.value or backup.signingKey.existingSecret is required");
    const sealed = ["--set", "backup.signingKey.existingSecret=backup-seal"];
    const s3 = await template([...production, ...sealed, "--set", "backup.enabled=true"]);
    const [cron] = byKind(s3, "CronJob");
    expect(cron!.spec.concurrencyPolicy).toBe("Forbid");
    const pod = cron!.spec.jobTemplate.spec.template.spec;
    const c = pod.containers[0];
    expect(c.command.slice(0, 2)).toEqual(["sh", "-c"]);
    expect(c.command[2]).toContain(
      'services/admin/src/cli.ts backup --json --to "$BACKUP_TARGET$(date -u +%Y%m%dT%H%M%SZ)"',
    );
    expect(c.command[2]).not.toContain("webhook-key");
    expect(c.env.find((e: { name: string }) => e.name === "BACKUP_SIGNING_KEY").valueFrom.secretKeyRef).toEqual({
      name: "backup-seal",
      key: "key",
    });
    expect(c.env.find((e: { name: string }) => e.name === "BACKUP_TARGET").value).toBe("s3://pss-media/backups/");
    expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
    expect(pod.volumes.find((v: { name: string }) => v.name === "tmp").emptyDir.sizeLimit).toBe("4Gi");
    expect(byKind(s3, "PersistentVolumeClaim")).toEqual([]);

    const pvc = await template([
      ...production,
      "--set",
      "backup.enabled=true",
      "--set",
      "backup.destination=pvc",
      "--set",
      `backup.signingKey.value=${"ab".repeat(32)}`,
    ]);
    expect(secretValue(pvc, "pss-partner-syndication-service-backup-signing-key", "key")).toBe("ab".repeat(32));
    const [claim] = byKind(pvc, "PersistentVolumeClaim");
    expect(claim!.metadata.annotations?.["helm.sh/resource-policy"]).toBe("keep");
    const pvcPod = byKind(pvc, "CronJob")[0]!.spec.jobTemplate.spec.template.spec;
    expect(pvcPod.volumes.find((v: { name: string }) => v.name === "backup").persistentVolumeClaim.claimName).toBe(
      claim!.metadata.name,
    );
    expect(pvcPod.containers[0].env.find((e: { name: string }) => e.name === "BACKUP_TARGET").value).toBe("/backup/");

    expect(byKind(await template(production), "Job").map((j) => j.metadata.name)).toEqual([
      "pss-partner-syndication-service-migrate",
    ]);
    const restore = await template([
      ...production,
      "--set",
      "restore.backup=20261128T101500Z",
      "--set",
      "restore.databaseSecret=new-database",
      "--set",
      "restore.mediaPrefix=restored/",
      ...sealed,
      "--show-only",
      "templates/restore-job.yaml",
    ]);
    expect(restore.length).toBe(1);
    const job = restore[0]!.spec.template.spec.containers[0];
    expect(job.command[2]).toBe(
      "exec bun services/admin/src/cli.ts restore --json --from 's3://pss-media/backups/20261128T101500Z'",
    );
    const env = Object.fromEntries(
      job.env.map((e: { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string } } }) => [
        e.name,
        e.value ?? e.valueFrom?.secretKeyRef.name,
      ]),
    );
    expect(env.DATABASE_URL).toBe("new-database");
    expect(env.S3_PREFIX).toBe("restored/");
  });

  it("README.md is generated from values.yaml and explains every value", async () => {
    const { chartReadme, valueDocs } = await import("../../scripts/chart-readme.ts");
    const values = readFileSync(join(CHART, "values.yaml"), "utf8");
    const readme = chartReadme(values, readFileSync(join(CHART, "Chart.yaml"), "utf8"));
    expect(readFileSync(join(CHART, "README.md"), "utf8") === readme ? "current" : "run npm run chart:readme").toBe(
      "current",
    );
    const undescribed = valueDocs(values)
      .filter((d) => !d.section && !d.description)
      .map((d) => d.key);
    expect(undescribed).toEqual([]);
    expect(readme).toContain("| `services.<name>.replicas` |");
    expect(readme).toContain('| `webhookSecretKey.existingSecret` | `""` |');
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
    expect(byKind(docs, "PodDisruptionBudget").length).toBe(SERVICES.length);
    expect(byKind(docs, "HorizontalPodAutoscaler")).toEqual([]);
    const hpa = await template([...production, "--set", "services.media.autoscaling.enabled=true"]);
    expect(byKind(hpa, "HorizontalPodAutoscaler").map((h) => h.spec.scaleTargetRef.name)).toEqual([
      "pss-partner-syndication-service-media",
    ]);
    expect(deployment(hpa, "media").spec.replicas).toBeUndefined();
  });

  it("takes credentials from existing Secrets instead of making them", async () => {
    const existing = [
      "database.existingSecret=db-creds",
      "s3.existingSecret=s3-creds",
      "smtp.existingSecret=mail",
      "webhookSecretKey.existingSecret=hook-key",
    ].flatMap((s) => ["--set", s]);
    const docs = await template([...production, ...existing]);
    // Left: the URLs that may carry a password (redis.url, opensearch.url), in a Secret the chart makes.
    expect(byKind(docs, "Secret").map((s) => s.metadata.name)).toEqual(["pss-partner-syndication-service-env"]);
    const all = await template([
      ...production,
      ...existing,
      "--set",
      "redis.existingSecret=redis-url",
      "--set",
      "opensearch.existingSecret=search-url",
    ]);
    expect(byKind(all, "Secret")).toEqual([]);
    const envOf = (service: Service) =>
      deployment(all, service).spec.template.spec.containers[0].env as {
        name: string;
        valueFrom?: { secretKeyRef: { name: string } };
      }[];
    const secretOf = (service: Service, name: string) =>
      envOf(service).find((e) => e.name === name)?.valueFrom?.secretKeyRef.name;
    expect(
      ["DATABASE_URL", "WEBHOOK_SECRET_KEY", "REDIS_URL", "OPENSEARCH_URL"].map((name) => secretOf("api", name)),
    ).toEqual(["db-creds", "hook-key", "redis-url", "search-url"]);
    // The image store's credentials go to those that read it: the marketplace (images) and media.
    expect(["marketplace", "media"].map((s) => secretOf(s as Service, "S3_SECRET_ACCESS_KEY"))).toEqual([
      "s3-creds",
      "s3-creds",
    ]);
    expect(byKind(all, "Job")[0]!.spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name).toBe("db-creds");
  });

  it("connects to managed servers securely: TLS files from the operator's Secrets mounted read-only, passwords only from Secrets, and every service accepts it in production", async () => {
    const secured = [
      "database.url=postgres://pss:db-secret@db.example.com:5432/pss?sslmode=verify-full",
      "database.tls.existingSecret=db-tls",
      "redis.url=rediss://cache.example.com:6380",
      "redis.username=pss",
      "redis.password=redis-secret",
      "redis.tls.existingSecret=redis-tls",
      "kafka.brokers=b-1.example.com:9096\\,b-2.example.com:9096", // --set needs the comma escaped
      "kafka.tls.enabled=true",
      "kafka.tls.existingSecret=kafka-tls",
      "kafka.tls.certKey=client.crt",
      "kafka.tls.keyKey=client.key",
      "kafka.sasl.mechanism=scram-sha-512",
      "kafka.sasl.username=pss",
      "kafka.sasl.password=kafka-secret",
      "kafka.minInsyncReplicas=2",
      "opensearch.url=https://search.example.com",
      "opensearch.username=pss",
      "opensearch.password=search-secret",
    ].flatMap((v) => ["--set", v]);
    const docs = await template([...production, ...secured]);
    // No password in the ConfigMap; each comes from a Secret.
    const config = JSON.stringify(byKind(docs, "ConfigMap"));
    for (const secret of ["redis-secret", "kafka-secret", "search-secret", "db-secret"])
      expect([secret, config.includes(secret)]).toEqual([secret, false]);
    const pod = deployment(docs, "indexer").spec.template.spec;
    const env = pod.containers[0].env as { name: string; valueFrom?: { secretKeyRef: { name: string } } }[];
    for (const name of ["REDIS_PASSWORD", "KAFKA_SASL_PASSWORD", "OPENSEARCH_PASSWORD", "DATABASE_URL"])
      expect([name, env.find((e) => e.name === name)?.valueFrom?.secretKeyRef.name]).toEqual([
        name,
        expect.stringContaining("pss-partner-syndication-service"),
      ]);
    // Each server's TLS files: the operator's Secret, read-only at /etc/pss/tls/<server>; the database's also in the
    // init container that waits for the schema, and in the migration Job.
    expect(
      pod.volumes
        .filter((v: { secret?: unknown }) => v.secret)
        .map((v: { name: string; secret: { secretName: string } }) => [v.name, v.secret.secretName]),
    ).toEqual([
      ["tls-database", "db-tls"],
      ["tls-kafka", "kafka-tls"],
      ["tls-redis", "redis-tls"],
    ]);
    for (const mount of pod.containers[0].volumeMounts.filter((m: { name: string }) => m.name.startsWith("tls-")))
      expect(mount).toEqual({ name: mount.name, mountPath: `/etc/pss/tls/${mount.name.slice(4)}`, readOnly: true });
    expect(pod.initContainers.at(-1).volumeMounts.map((m: { name: string }) => m.name)).toContain("tls-database");
    const job = byKind(docs, "Job")[0]!.spec.template.spec;
    expect(job.containers[0].env).toContainEqual({
      name: "DATABASE_TLS_CA_FILE",
      value: "/etc/pss/tls/database/ca.crt",
    });
    expect(job.volumes.map((v: { name: string }) => v.name)).toContain("tls-database");
    // What each service reads, with the mounted files standing where the Secrets would put them.
    const files = mkdtempSync(join(tmpdir(), "pss-chart-tls-"));
    const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    for (const service of SERVICES) {
      const serviceEnv = containerEnv(docs, service);
      for (const [name, value] of Object.entries(serviceEnv)) {
        if (!value?.startsWith("/etc/pss/tls/")) continue;
        const local = join(files, value.replace(/\//g, "_"));
        writeFileSync(local, pem);
        serviceEnv[name] = local;
      }
      expect(serviceEnv).toMatchObject({
        KAFKA_TLS: "true",
        KAFKA_SASL_MECHANISM: "scram-sha-512",
        KAFKA_MIN_INSYNC_REPLICAS: "2",
        KAFKA_SASL_PASSWORD: "kafka-secret",
      });
      expect(() => LOADERS[service](serviceEnv)).not.toThrow();
    }
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

  it("traces: off by default; to a Zipkin of the operator's, or to the release's own with its UI", async () => {
    const off = await template(production);
    for (const service of SERVICES) expect(containerEnv(off, service).TRACING_ZIPKIN_URL).toBeUndefined();
    expect(byKind(off, "Deployment").some((d) => d.metadata.name.endsWith("-zipkin"))).toBe(false);

    const theirs = await template([
      ...production,
      "--set",
      "tracing.zipkinUrl=http://zipkin.observability:9411/api/v2/spans",
      "--set",
      "tracing.sampleRatio=0.1",
    ]);
    for (const service of SERVICES) {
      const env = containerEnv(theirs, service);
      expect(env).toMatchObject({
        TRACING_ZIPKIN_URL: "http://zipkin.observability:9411/api/v2/spans",
        TRACING_SAMPLE_RATIO: "0.1",
      });
      // Each service accepts it.
      expect(() => LOADERS[service](env)).not.toThrow();
    }

    const own = await template([...production, "--set", "tracing.zipkin.enabled=true"]);
    const zipkin = byKind(own, "Deployment").find((d) => d.metadata.name === "pss-partner-syndication-service-zipkin");
    expect(zipkin?.spec.template.spec.containers[0].image).toBe("openzipkin/zipkin:3.5.1");
    expect(byKind(own, "Service").some((d) => d.metadata.name === "pss-partner-syndication-service-zipkin")).toBe(true);
    expect(containerEnv(own, "api").TRACING_ZIPKIN_URL).toBe(
      "http://pss-partner-syndication-service-zipkin:9411/api/v2/spans",
    );
    const bad = await helm(["template", "pss", CHART, ...production, "--set", "tracing.sampleRatio=2"]);
    expect(bad.code).not.toBe(0);
  });
});
