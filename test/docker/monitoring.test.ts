// The optional monitoring stack (compose profile "monitoring"): Prometheus scrapes every app service on the port
// compose tells it to serve /metrics on, images are pinned, and every metric the dashboard and the alerts use
// is one docs/operations.md explains.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..", "..");
const read = (file: string) => readFileSync(join(root, file), "utf8");

interface ComposeService {
  image?: string;
  command?: string[];
  profiles?: string[];
  ports?: string[];
  environment?: Record<string, string | number>;
}
const compose = Bun.YAML.parse(read("docker-compose.yml")) as { services: Record<string, ComposeService> };
const prometheus = Bun.YAML.parse(read("monitoring/prometheus.yml")) as {
  scrape_configs: {
    job_name: string;
    static_configs?: { targets: string[] }[];
    dns_sd_configs?: { names: string[]; type: string; port: number }[];
  }[];
};
const alerts = Bun.YAML.parse(read("monitoring/alerts.yml")) as {
  groups: { rules: { alert: string; expr: string; annotations?: { runbook?: string } }[] }[];
};
const dashboard = JSON.parse(read("monitoring/grafana/dashboards/pss-overview.json")) as {
  panels: { targets?: { expr: string }[] }[];
};
const operations = read("docs/operations.md");

const appServices = Object.entries(compose.services).filter(
  ([, s]) => s.command?.[0] === "bun" && s.command[1]?.startsWith("services/"),
);

/** The port an app service serves /healthz, /readyz and /metrics on, as its own configuration reads it. */
function healthPortOf(name: string, s: ComposeService): number {
  const env = s.environment ?? {};
  return Number(name === "api" ? env.API_HEALTH_PORT : env.HEALTH_PORT);
}

test("Prometheus scrapes every replica of every app service at the health port compose gives it, which is also its healthcheck's port", () => {
  // Service discovery by compose's DNS (an A record per replica), so `--scale media=3` is scraped three times.
  expect(prometheus.scrape_configs.filter((c) => c.static_configs !== undefined).map((c) => c.job_name)).toEqual([]);
  const targets = prometheus.scrape_configs.flatMap((c) =>
    (c.dns_sd_configs ?? []).flatMap((sd) => (sd.type === "A" ? sd.names.map((n) => `${n}:${sd.port}`) : [])),
  );
  expect(appServices.length).toBe(8);
  for (const [name, s] of appServices) {
    const port = healthPortOf(name, s);
    expect([name, Number.isInteger(port) && port > 0]).toEqual([name, true]);
    expect([name, Number(s.environment?.SERVICE_HEALTH_PORT)]).toEqual([name, port]);
    expect(targets).toContain(`${name}:${port}`);
  }
  expect(targets).toHaveLength(appServices.length);
});

test("only the balancer's port is published; the API and the health ports stay inside the network", () => {
  expect(appServices.flatMap(([, s]) => s.ports ?? [])).toEqual([]);
  // PSS_API_PORT moves the host side (the compose stack test publishes it on a free loopback port).
  expect(compose.services.balancer!.ports).toEqual(["${PSS_API_PORT:-8080}:8080"]);
  expect(compose.services.api!.environment!.API_PORT).toBe(8080);
});

test("Prometheus and Grafana are optional (monitoring profile) and their images are pinned", () => {
  for (const name of ["prometheus", "grafana"]) {
    const s = compose.services[name]!;
    expect(s.profiles).toEqual(["monitoring"]);
    // A pinned official image, or the image variable npm run images sets with that pinned image as its default.
    expect(s.image).toMatch(/^(\$\{PSS_[A-Z]+_IMAGE:-)?[a-z0-9/._-]+:v?\d+\.\d+\.\d+\}?$/);
  }
});

test("every metric the dashboard and the alerts use is explained in docs/operations.md", () => {
  const exprs = [
    ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
    ...alerts.groups.flatMap((g) => g.rules.map((r) => r.expr)),
  ];
  expect(exprs.length).toBeGreaterThan(20);
  const names = new Set<string>();
  for (const expr of exprs) {
    for (const m of expr.matchAll(
      /\b([a-z_]+_(?:total|seconds|rows|messages|bytes|pending|active|images|deliveries|up)(?:_bucket)?)\b/g,
    ))
      names.add(m[1]!.replace(/_bucket$/, ""));
  }
  names.delete("up");
  // Documented as `name` or `name{labels}`.
  const undocumented = [...names].filter((n) => !new RegExp(`\`${n}[\`{]`).test(operations));
  expect(undocumented).toEqual([]);
});

test("every metric the services declare is explained in docs/operations.md", () => {
  const files = [
    "packages/service-kit/src/metrics.ts",
    "packages/service-kit/src/http-metrics.ts",
    "packages/service-kit/src/consumer-metrics.ts",
    "services/api/src/outbox/outbox-metrics.ts",
    "services/api/src/listings/write-group-metrics.ts",
    "services/media/src/media-metrics.ts",
    "services/indexer/src/indexer-metrics.ts",
    "services/indexer/src/reconcile/reconciler.ts",
    "services/leads/src/leads-metrics.ts",
    "services/webhooks/src/webhooks-metrics.ts",
  ];
  // Metric names are namespaced (`service_thing_unit`); a bare `name:` in these files names a periodic job or a lease.
  const declared = files.flatMap((f) => [...read(f).matchAll(/\bname: "([a-z]+_[a-z_]+)"/g)].map((m) => m[1]!));
  expect(declared.length).toBeGreaterThanOrEqual(25);
  expect(declared.filter((n) => !new RegExp(`\`${n}[\`{]`).test(operations))).toEqual([]);
});

/** GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, "")
    .replace(/ /g, "-");

test("every alert names a runbook section of docs/operations.md that says what it means and what to do", () => {
  const sections = new Map<string, string>();
  const parts = operations.split(/^#{2,3} (.+)$/m);
  for (let i = 1; i < parts.length; i += 2) sections.set(anchorOf(parts[i]!), parts[i + 1]!);
  const rules = alerts.groups.flatMap((g) => g.rules);
  expect(rules.length).toBeGreaterThan(10);
  for (const rule of rules) {
    const runbook = rule.annotations?.runbook ?? "";
    expect({ alert: rule.alert, runbook }).toEqual({
      alert: rule.alert,
      runbook: expect.stringMatching(/^docs\/operations\.md#/),
    });
    const section = sections.get(runbook.slice(runbook.indexOf("#") + 1));
    expect({ alert: rule.alert, section: section !== undefined }).toEqual({ alert: rule.alert, section: true });
    expect(section).toContain("**What it means:**");
    expect(section).toContain("**What to do:**");
  }
});
