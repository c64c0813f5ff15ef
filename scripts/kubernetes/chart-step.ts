// npm test's Kubernetes step (scripts/test.ts, container part, after the compose tests): a one-node cluster
// (cluster.ts) with the images `npm run images` built imported into it, the chart test
// (test/kubernetes/chart-cluster.test.ts) run against it, and the cluster stopped with the host left as found.
// The binaries' build (first run only) is started early by `prepareKubernetes` at nice 19, so it overlaps the
// rest of the run instead of adding to it.
import { ensureKubeBinaries, type KubeBinaries } from "./binaries.ts";
import { cannotStartCluster, type Cluster, startCluster } from "./cluster.ts";

type Log = (line: string) => void;

/** Whether the step runs with the container part: PSS_KUBERNETES=0 leaves it out (docs/operations.md, "Kubernetes"). */
export function kubernetesStepEnabled(env: Record<string, string | undefined> = process.env): boolean {
  return env.PSS_KUBERNETES !== "0";
}

/** Starts building the binaries where missing (a promise the step awaits); null when no cluster can be had here. */
export function prepareKubernetes(log: Log): Promise<KubeBinaries> | null {
  if (cannotStartCluster()) return null;
  const t0 = Date.now();
  const ready = ensureKubeBinaries({ build: true, log }).then((b) => {
    const s = (Date.now() - t0) / 1000;
    if (s > 5) log(`Kubernetes binaries ready after ${s.toFixed(0)} s`);
    return b;
  });
  ready.catch(() => {}); // awaited by the step; never an unhandled rejection meanwhile
  return ready;
}

export interface ChartStepResult {
  skipped?: string;
  timings: Record<string, number>;
}

/**
 * The cluster up with the images in it, `run` (the chart test) against it, the cluster down. `images` are the
 * image variables (PSS_IMAGE, ...) of `npm run images`; `run` gets the environment the test reads.
 */
export async function chartStep(opts: {
  images: Record<string, string>;
  binaries: Promise<KubeBinaries> | null;
  log: Log;
  run: (env: Record<string, string>) => Promise<void>;
}): Promise<ChartStepResult> {
  const timings: Record<string, number> = {};
  const why = cannotStartCluster();
  if (why || !opts.binaries) return { skipped: why ?? "no Kubernetes binaries", timings };
  let t = Date.now();
  // Like a missing engine: binaries that cannot be had (no Go, no module proxy) skip the step with one line.
  const binaries = await opts.binaries.catch((err: Error) => err);
  timings.binaries = (Date.now() - t) / 1000;
  if (binaries instanceof Error)
    return { skipped: `the Kubernetes binaries could not be built: ${binaries.message.split("\n")[0]}`, timings };
  t = Date.now();
  const cluster: Cluster = await startCluster({ log: opts.log });
  timings.cluster = (Date.now() - t) / 1000;
  try {
    t = Date.now();
    const tags = Object.values(opts.images);
    const imported = await cluster.importImages(tags);
    const service = opts.images.PSS_IMAGE;
    if (!service) throw new Error("no PSS_IMAGE among the images");
    // The upgrade's "new version": the same image under a second tag (a rolling upgrade needs only a new tag).
    const upgradeImage = `${service}-upgrade`;
    await cluster.tagImage(service, upgradeImage);
    timings.import = (Date.now() - t) / 1000;
    opts.log(`${imported} images imported into the node in ${timings.import.toFixed(0)} s`);
    t = Date.now();
    await opts.run({
      ...opts.images,
      PSS_KUBERNETES_TESTS: "1",
      PSS_KUBECONFIG: cluster.kubeconfig,
      PSS_KUBECTL: binaries.path("kubectl"),
      PSS_HELM: binaries.path("helm"),
      PSS_NODE_IP: cluster.nodeIp,
      PSS_UPGRADE_IMAGE: upgradeImage,
    });
    timings.test = (Date.now() - t) / 1000;
  } finally {
    t = Date.now();
    await cluster.stop();
    timings.stop = (Date.now() - t) / 1000;
  }
  return { timings };
}
