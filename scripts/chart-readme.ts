// `npm run chart:readme`: deploy/helm/partner-syndication-service/README.md from the chart's values.yaml, every value
// with its default and the comment above it (values.yaml is the one place values are explained). The services'
// values are one row each (`services.<name>.replicas`), their defaults side by side where they differ. The chart
// lint test (test/kubernetes/chart-lint.test.ts) fails when README.md is not what this makes, or a value has no
// comment.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const CHART_DIR = join(import.meta.dir, "..", "deploy", "helm", "partner-syndication-service");

export interface ValueDoc {
  /** Dotted path, services' names as `<name>`. */
  key: string;
  /** Its default as YAML would show it; per service where they differ. */
  default: string;
  description: string;
  /** A mapping whose values have rows of their own. */
  section: boolean;
}

interface Line {
  indent: number;
  key: string;
  rest: string;
  comment: string[];
}

/** The key lines of a YAML file of block mappings (no list items), each with the comment block right above it. */
function keyLines(text: string): Line[] {
  const out: Line[] = [];
  let comment: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\s+$/, "");
    if (line.trim() === "") {
      comment = [];
      continue;
    }
    const c = /^\s*#\s?(?<text>.*)$/.exec(line)?.groups;
    if (c) {
      comment.push(c.text ?? "");
      continue;
    }
    const k = /^(?<indent>\s*)(?<key>[A-Za-z0-9_.-]+):(?:\s+(?<rest>.*))?$/.exec(line)?.groups;
    if (k) out.push({ indent: (k.indent ?? "").length, key: k.key ?? "", rest: k.rest ?? "", comment });
    comment = [];
  }
  return out;
}

function show(value: unknown): string {
  if (value === "") return '""';
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

function valueAt(values: unknown, path: string[]): unknown {
  return path.reduce<unknown>(
    (v, k) => (v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined),
    values,
  );
}

/**
 * A mapping none of whose keys has a comment is one value (e.g. `podSecurityContext`, `resources`: Kubernetes
 * objects passed through whole); any other mapping is a section and its keys are values of their own.
 */
export function valueDocs(valuesText: string): ValueDoc[] {
  const values = Bun.YAML.parse(valuesText);
  const lines = keyLines(valuesText);
  const rows = new Map<string, { defaults: [string, string][]; description: string; section: boolean }>();
  const stack: { indent: number; key: string; whole: boolean }[] = [];
  const childrenOf = (i: number, indent: number) => {
    const out: Line[] = [];
    for (const next of lines.slice(i + 1)) {
      if (next.indent <= indent) break;
      out.push(next);
    }
    return out;
  };
  for (const [i, line] of lines.entries()) {
    while ((stack.at(-1)?.indent ?? -1) >= line.indent) stack.pop();
    if (stack.some((s) => s.whole)) continue;
    const path = [...stack.map((s) => s.key), line.key];
    const children = line.rest === "" ? childrenOf(i, line.indent) : [];
    const whole = children.length > 0 && children.every((c) => c.comment.length === 0);
    const section = children.length > 0 && !whole;
    if (children.length > 0) stack.push({ indent: line.indent, key: line.key, whole });
    const service = path[0] === "services" ? (path[1] ?? null) : null;
    const key = service ? ["services", "<name>", ...path.slice(2)].join(".") : path.join(".");
    const row = rows.get(key) ?? { defaults: [], description: "", section };
    if (!row.description) row.description = line.comment.join(" ");
    if (!section) row.defaults.push([service ?? "", show(valueAt(values, path))]);
    rows.set(key, row);
  }
  return [...rows].map(([key, row]) => {
    const distinct = new Set(row.defaults.map(([, d]) => d));
    const shown =
      distinct.size <= 1
        ? (row.defaults[0]?.[1] ?? "")
        : row.defaults.map(([service, d]) => `${service}: ${d}`).join("; ");
    return { key, default: shown, description: row.description, section: row.section };
  });
}

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/</g, "\\<");

export function chartReadme(valuesText: string, chartText: string): string {
  const chart = Bun.YAML.parse(chartText) as { name: string; description: string; version: string; appVersion: string };
  const rows = valueDocs(valuesText).filter((r) => !r.section || r.description);
  return `# ${chart.name} (Helm chart ${chart.version}, app ${chart.appVersion})

${chart.description.trim()}

Install, upgrade, roll back, back up and restore: docs/operations.md, "Kubernetes". Production values (the default)
need your image, your servers' addresses and your credentials; \`values-development.yaml\` runs the servers in the
cluster for trials. \`values.schema.json\` refuses a wrong value at install time.

This file is generated from \`values.yaml\` (\`npm run chart:readme\`): change the comments there. The eight services take
the same values, \`services.<name>.*\` with \`<name>\` one of api, marketplace, outbox-relay, media, indexer, leads, webhooks,
portal.

## Values

| Value | Default | What it does |
|---|---|---|
${rows.map((r) => `| \`${r.key}\` | ${r.section ? "" : `\`${cell(r.default)}\``} | ${cell(r.description)} |`).join("\n")}
`;
}

if (import.meta.main) {
  const readme = chartReadme(
    readFileSync(join(CHART_DIR, "values.yaml"), "utf8"),
    readFileSync(join(CHART_DIR, "Chart.yaml"), "utf8"),
  );
  writeFileSync(join(CHART_DIR, "README.md"), readme);
  console.error(`chart:readme: ${join(CHART_DIR, "README.md")} written`);
}
