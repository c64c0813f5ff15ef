// docker-compose.yml's header promises that every image comes from a variable (so an air-gapped host points each
// at an image of its own): every service's image is `${PSS_…_IMAGE:-<official image>}`, and the header names each
// variable the file uses, no more.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const yaml = readFileSync(join(import.meta.dir, "..", "..", "docker-compose.yml"), "utf8");
const compose = Bun.YAML.parse(yaml) as { services: Record<string, { image?: string; build?: unknown }> };

test("every service's image comes from a PSS_*_IMAGE variable with a pinned default, and the header names them all", () => {
  const images = Object.entries(compose.services).flatMap(([name, s]) => (s.image ? [[name, s.image] as const] : []));
  // Not vacuous: the servers, the app image, the balancer and the monitoring profile's two.
  expect(images.length).toBeGreaterThanOrEqual(10);
  const notFromVariable = images.filter(([, image]) => !/^\$\{PSS_(?:[A-Z0-9_]+_)?IMAGE:-[^}]+:[^}]+\}$/.test(image));
  expect(notFromVariable).toEqual([]);
  const used = [...new Set(images.map(([, image]) => /^\$\{(PSS_(?:[A-Z0-9_]+_)?IMAGE)/.exec(image)![1]!))].sort();
  const header = yaml
    .split("\n")
    .filter((l) => l.startsWith("#"))
    .slice(0, 15)
    .join("\n");
  const promised = /Every image comes from a variable \(([^)]*)\)/.exec(header.replace(/\n# /g, " "))?.[1];
  expect(promised?.split(/,\s*/).sort()).toEqual(used);
});
