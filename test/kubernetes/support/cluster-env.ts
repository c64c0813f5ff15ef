// What the chart test gets from npm test's container part (scripts/test.ts): a one-node cluster it started
// (scripts/kubernetes/cluster.ts) with the images imported, as environment variables.
import { runTool } from "../../../scripts/kubernetes/cluster.ts";

export interface ClusterEnv {
  kubeconfig: string;
  kubectlBin: string;
  helmBin: string;
  nodeIp: string;
  /** Image variables (PSS_IMAGE, PSS_POSTGRES_IMAGE, ...) → tags in the node's store. */
  images: Record<string, string>;
  /** PSS_IMAGE's content under a second tag: the upgrade's "new version". */
  upgradeImage: string;
}

export function clusterTestsUnavailable(): string | null {
  if (process.env.PSS_KUBERNETES_TESTS !== "1")
    return "PSS_KUBERNETES_TESTS is not 1 (npm test's container part sets it once a one-node cluster runs)";
  for (const v of ["PSS_KUBECONFIG", "PSS_KUBECTL", "PSS_HELM", "PSS_NODE_IP", "PSS_IMAGE", "PSS_UPGRADE_IMAGE"])
    if (!process.env[v]) return `${v} is not set`;
  return null;
}

export function clusterEnv(): ClusterEnv {
  const e = process.env;
  return {
    kubeconfig: e.PSS_KUBECONFIG!,
    kubectlBin: e.PSS_KUBECTL!,
    helmBin: e.PSS_HELM!,
    nodeIp: e.PSS_NODE_IP!,
    images: Object.fromEntries(
      [
        "PSS_IMAGE",
        "PSS_POSTGRES_IMAGE",
        "PSS_REDIS_IMAGE",
        "PSS_KAFKA_IMAGE",
        "PSS_OPENSEARCH_IMAGE",
        "PSS_S3_IMAGE",
        "PSS_SMTP_IMAGE",
      ]
        .filter((v) => e[v])
        .map((v) => [v, e[v]!]),
    ),
    upgradeImage: e.PSS_UPGRADE_IMAGE!,
  };
}

export function tools(env: ClusterEnv, namespace: string) {
  return {
    kubectl: (args: string[], o: { timeoutMs?: number; stdin?: string } = {}) =>
      runTool([env.kubectlBin, "--kubeconfig", env.kubeconfig, "-n", namespace, ...args], o),
    helm: (args: string[], o: { timeoutMs?: number } = {}) =>
      runTool([env.helmBin, "--kubeconfig", env.kubeconfig, "-n", namespace, ...args], {
        timeoutMs: o.timeoutMs ?? 600_000,
      }),
  };
}

/** The first partner and its API key, as NOTES.txt tells an operator: the admin CLI in the API's pod. */
export async function createFirstPartner(
  kubectl: ReturnType<typeof tools>["kubectl"],
  prefix: string,
  name: string,
): Promise<{ apiKey: string }> {
  const out = await kubectl([
    "exec",
    `deploy/${prefix}-api`,
    "--",
    "bun",
    "services/admin/src/cli.ts",
    "partners",
    "create",
    "--name",
    name,
    "--lead-tracking",
    "--json",
  ]);
  return JSON.parse(out) as { apiKey: string };
}

/** repository and tag of an image reference (the tag after the last colon that follows the last slash). */
export function splitImage(ref: string): { repository: string; tag: string } {
  const slash = ref.lastIndexOf("/");
  const colon = ref.lastIndexOf(":");
  return colon > slash
    ? { repository: ref.slice(0, colon), tag: ref.slice(colon + 1) }
    : { repository: ref, tag: "latest" };
}

/**
 * What a chart test file works in: a namespace of its own (`<label>-<6 hex>`), the release `pss`, its tools, and
 * its step timings. `env` is null when the tests cannot run here (`unavailable` says why).
 */
export function chartTestContext(label: string, unavailable: string | null) {
  const token = `k${label[0]}${crypto.randomUUID().replace(/-/g, "").slice(0, 10)}`;
  const namespace = `pss-${label}-${token.slice(2, 8)}`;
  const release = "pss";
  const prefix = `${release}-partner-syndication-service`;
  const env = unavailable ? null : clusterEnv();
  const { kubectl, helm } = env ? tools(env, namespace) : ({} as ReturnType<typeof tools>);
  /** kubectl without the namespace (namespaces themselves). */
  const cluster = (args: string[]) => runTool([env!.kubectlBin, "--kubeconfig", env!.kubeconfig, ...args]);
  return {
    token,
    namespace,
    release,
    prefix,
    env,
    kubectl,
    helm,
    timings: {} as Record<string, number>,
    seconds: (t0: number) => Math.round((Date.now() - t0) / 100) / 10,
    createNamespace: () => cluster(["create", "namespace", namespace]),
    /** Whatever a failed step left: the release and the namespace go (the cluster is stopped after the files). */
    async removeRelease() {
      await helm(["uninstall", release, "--wait", "--timeout", "2m"], { timeoutMs: 150_000 }).catch(() => {});
      await cluster(["delete", "namespace", namespace, "--wait=true", "--timeout=120s"]).catch(() => {});
    },
    /** Every object still labelled with the release (kind/name, sorted): what `helm uninstall` left. */
    async leftovers(): Promise<string[]> {
      const out = await kubectl([
        "get",
        "all,configmap,secret,serviceaccount,networkpolicy,poddisruptionbudget,cronjob,job,pvc,ingress",
        "-l",
        `app.kubernetes.io/instance=${release}`,
        "-o",
        "name",
      ]);
      return out.split("\n").filter(Boolean).sort();
    },
    /**
     * What the namespace holds when a step failed: pods (phase, readiness, restarts), jobs and deployments, the
     * newest events, and the last log lines of every container that is not ready (the previous one's too after a
     * restart). Each part reports its own error instead of throwing: it is read to explain another failure.
     */
    async state(): Promise<string> {
      const part = async (title: string, args: string[]) =>
        `--- ${title}\n${(await kubectl(args).catch((err: Error) => `(${err.message.split("\n")[0]})`)).trim()}`;
      const parts = [
        await part("pods, jobs, deployments", ["get", "pods,jobs,deployments", "-o", "wide"]),
        await part("events (newest last)", ["get", "events", "--sort-by=.lastTimestamp"]).then((t) =>
          t.split("\n").slice(-40).join("\n"),
        ),
      ];
      const pods = JSON.parse(await kubectl(["get", "pods", "-o", "json"]).catch(() => '{"items":[]}')) as {
        items: {
          metadata: { name: string };
          status: { containerStatuses?: { name: string; ready: boolean; restartCount: number }[] };
        }[];
      };
      for (const pod of pods.items)
        for (const c of pod.status.containerStatuses ?? []) {
          if (c.ready) continue;
          parts.push(
            await part(`log of ${pod.metadata.name}/${c.name}`, ["logs", pod.metadata.name, "-c", c.name, "--tail=15"]),
          );
          if (c.restartCount > 0)
            parts.push(
              await part(`previous log of ${pod.metadata.name}/${c.name}`, [
                "logs",
                pod.metadata.name,
                "-c",
                c.name,
                "--previous",
                "--tail=15",
              ]),
            );
        }
      return parts.join("\n");
    },
    /** `step`, and on its failure the namespace's state (state()) added to the error. */
    async explained<T>(step: Promise<T>): Promise<T> {
      try {
        return await step;
      } catch (err) {
        const state = await this.state();
        throw new Error(`${(err as Error).message}\nthe namespace ${namespace} then:\n${state}`);
      }
    },
    async clusterIp(service: string): Promise<string> {
      return (await kubectl(["get", "service", `${prefix}-${service}`, "-o", "jsonpath={.spec.clusterIP}"])).trim();
    },
  };
}
