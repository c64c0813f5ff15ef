// The Helm chart under test and the Helm binary (built from the Go module proxy by scripts/kubernetes/binaries.ts;
// npm test builds it when missing and passes its path as PSS_HELM).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { helmPath, kubeToolEnv } from "../../../scripts/kubernetes/binaries.ts";

export const ROOT = join(import.meta.dir, "..", "..", "..");
export const CHART = join(ROOT, "deploy", "helm", "partner-syndication-service");
export const DEV_VALUES = join(CHART, "values-development.yaml");

export function helmBinary(): string | null {
  const candidates = [process.env.PSS_HELM, helmPath()].filter((p): p is string => !!p);
  return candidates.find((p) => existsSync(p)) ?? null;
}

/** What a production install must set at least (values.yaml's header): all by URL, nothing in the cluster. */
export const PRODUCTION_SETTINGS = [
  "publicBaseUrl=https://listings.example.com",
  "database.url=postgres://pss:a-real-password@db.example.com:5432/pss",
  "redis.url=redis://redis.example.com:6379",
  "kafka.brokers=kafka-1.example.com:9092\\,kafka-2.example.com:9092",
  "opensearch.url=https://search.example.com",
  "s3.endpoint=https://s3.example.com",
  "s3.accessKeyId=AKIAEXAMPLE",
  "s3.secretAccessKey=a-real-secret",
  "smtp.host=smtp.example.com",
  "smtp.from=Listings <leads@example.com>",
  // The key every render must repeat (GitOps): given, never generated, in production.
  "webhookSecretKey.value=c2V2ZW50ZWVuLWJ5dGVzLW9mLWEtcmVhbC1rZXktMzI=",
];

export interface Rendered {
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

export async function helm(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const bin = helmBinary();
  if (!bin) throw new Error("no helm");
  const proc = Bun.spawn([bin, ...args], {
    env: kubeToolEnv(),
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
    timeout: 60_000,
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, out, err };
}

export async function template(args: string[]): Promise<Rendered[]> {
  const r = await helm(["template", "pss", CHART, ...args]);
  if (r.code !== 0) throw new Error(`helm template failed: ${r.err}`);
  const docs = Bun.YAML.parse(r.out) as unknown;
  return (Array.isArray(docs) ? docs : [docs]).filter((d): d is Rendered => !!d && typeof d === "object");
}
