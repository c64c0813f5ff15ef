// CONTRIBUTING.md sends a contributor to files and commands: every path it names exists, and the places its service
// checklist names are the ones where every existing service is registered (so the list is complete for them).
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..", "..");
const contributing = readFileSync(join(root, "CONTRIBUTING.md"), "utf8");

/** Backquoted names that are paths in this repository (a slash or a known file name; no placeholder). */
function namedPaths(text: string): string[] {
  return [...new Set([...text.matchAll(/`([^`\s]+)`/g)].map((m) => m[1]!))].filter(
    (t) =>
      !/[<>*]|NNNN|^-|^https?:|^~/.test(t) &&
      (/^[\w.-]+\/[\w./-]*$/.test(t) || /^[\w-]+\.(md|ts|yml|yaml|json|cfg)$/.test(t)),
  );
}

test("every file and directory CONTRIBUTING.md names exists", () => {
  const paths = namedPaths(contributing);
  // Not vacuous: the checklists name many places.
  expect(paths.length).toBeGreaterThan(25);
  const where = (p: string) =>
    [
      p,
      join("docs", p),
      join("test/docker", p),
      join("monitoring", p),
      join("deploy/helm/partner-syndication-service", p),
    ].find((c) => existsSync(join(root, c)));
  expect(paths.filter((p) => !where(p))).toEqual([]);
});

test("every place the service checklist names, where services are registered, names every running service", () => {
  const checklist = contributing.slice(
    contributing.indexOf("**A service**"),
    contributing.indexOf("## Cutting a release"),
  );
  const services = readdirSync(join(root, "services")).filter((s) => s !== "admin");
  expect(services.length).toBeGreaterThanOrEqual(5);
  const registries = [
    "scripts/start.ts",
    "docker-compose.yml",
    "test/docker/compose.test.ts",
    "monitoring/prometheus.yml",
    "deploy/helm/partner-syndication-service/values.yaml",
    "deploy/helm/partner-syndication-service/values.schema.json",
    "deploy/helm/partner-syndication-service/templates/deployments.yaml",
    "deploy/helm/partner-syndication-service/templates/autoscaling.yaml",
    "deploy/helm/partner-syndication-service/templates/_helpers.tpl",
    "Dockerfile",
  ];
  const missing: string[] = [];
  for (const file of registries) {
    const name = file.split("/").at(-1)!;
    if (!checklist.includes(name)) missing.push(`the checklist does not name ${file}`);
    const text = readFileSync(join(root, file), "utf8");
    for (const service of services) if (!text.includes(service)) missing.push(`${file} does not name ${service}`);
  }
  expect(missing).toEqual([]);
});
