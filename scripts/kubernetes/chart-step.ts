// npm test's Kubernetes step (scripts/test.ts, container part, after the compose tests): a one-node cluster
// (cluster.ts) with the images `npm run images` built imported into it for the development install, a registry
// (registry.ts) holding the service image as `npm run images -- --push` pushes it for the production install, the
// chart tests (test/kubernetes/chart-cluster.test.ts, chart-production.test.ts) run against them, and the
// registry and the cluster stopped with the host left as found. The binaries' build (first run only) is started
// early by `prepareKubernetes` at nice 19, so it overlaps the rest of the run instead of adding to it.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand } from "../../infra/src/process.ts";
import { commitTag, pushImages, releaseVersion } from "../containers/push-images.ts";
import { ensureKubeBinaries, type KubeBinaries } from "./binaries.ts";
import { cannotStartCluster, type Cluster, startCluster } from "./cluster.ts";
import { ensureRegistryBinary, startRegistry } from "./registry.ts";

type Log = (line: string) => void;

/** Whether the step runs with the container part: PSS_KUBERNETES=0 leaves it out (docs/operations.md, "Kubernetes"). */
export function kubernetesStepEnabled(env: Record<string, string | undefined> = process.env): boolean {
  return env.PSS_KUBERNETES !== "0";
}

/** Starts building the binaries where missing (a promise the step awaits); null when no cluster can be had here. */
export function prepareKubernetes(log: Log): Promise<KubeBinaries> | null {
  if (cannotStartCluster()) return null;
  const t0 = Date.now();
  const ready = ensureKubeBinaries({ build: true, log }).then(async (b) => {
    await ensureRegistryBinary({ log });
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
  let registry: Awaited<ReturnType<typeof startRegistry>> | null = null;
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
    registry = await startRegistry({
      binary: await ensureRegistryBinary({ log: opts.log }),
      hostsDir: cluster.registryHostsDir,
      log: opts.log,
    });
    const published = await publishForProduction(registry.address, service, opts.log);
    timings.registry = (Date.now() - t) / 1000;
    t = Date.now();
    await opts.run({
      ...opts.images,
      PSS_KUBERNETES_TESTS: "1",
      PSS_KUBECONFIG: cluster.kubeconfig,
      PSS_KUBECTL: binaries.path("kubectl"),
      PSS_HELM: binaries.path("helm"),
      PSS_NODE_IP: cluster.nodeIp,
      PSS_UPGRADE_IMAGE: upgradeImage,
      PSS_REGISTRY_REPOSITORY: published.repository,
      PSS_REGISTRY_TAGS: published.tags.join(","),
      PSS_REGISTRY_DIGEST: published.digest,
      PSS_REGISTRY_UPGRADE_DIGEST: published.upgradeDigest,
    });
    timings.test = (Date.now() - t) / 1000;
  } finally {
    t = Date.now();
    await registry?.stop();
    await cluster.stop();
    timings.stop = (Date.now() - t) / 1000;
  }
  return { timings };
}

/** The migration only the upgrade drill's "new version" has: it gives the upgrade's hook a migration to run. */
export const DRILL_MIGRATION = {
  file: "9990_upgrade_drill.sql",
  version: "9990",
  sql: "-- The cluster test's upgrade drill (scripts/kubernetes/chart-step.ts): only in the image it builds on top of\n-- this release's as the next version, so the upgrade's migration hook has a migration to run. Changes nothing.\nSELECT 1;\n",
};

/**
 * What the production install pulls from the registry, as an operator's release process would push it: the service
 * image under the release version and the commit (`npm run images -- --push`), and the next version, that image
 * plus DRILL_MIGRATION (a layer on top: a new digest, its other layers already in the registry).
 */
async function publishForProduction(
  registry: string,
  service: string,
  log: Log,
): Promise<{ repository: string; tags: string[]; digest: string; upgradeDigest: string }> {
  const commit = await commitTag();
  const tags = [releaseVersion(), commit];
  const [release] = await pushImages({ registry, images: { PSS_IMAGE: service }, tags, log });
  if (!release) throw new Error(`${service} was not pushed`);
  const ctx = mkdtempSync(join(tmpdir(), "pss-drill-image-"));
  try {
    writeFileSync(join(ctx, DRILL_MIGRATION.file), DRILL_MIGRATION.sql);
    writeFileSync(
      join(ctx, "Dockerfile"),
      `FROM ${service}\nCOPY ${DRILL_MIGRATION.file} /app/packages/database/migrations/${DRILL_MIGRATION.file}\n`,
    );
    const next = `${service}-drill`;
    await runCommand(["docker", "build", "--quiet", "-t", next, ctx], { env: { DOCKER_BUILDKIT: "0" } });
    const [upgrade] = await pushImages({ registry, images: { PSS_IMAGE: next }, tags: [`${commit}-next`], log });
    if (!upgrade) throw new Error(`${next} was not pushed`);
    // The registry's names were for pushing only (the registry's port changes from run to run): untagged again.
    const names = [next, ...tags.map((tag) => `${release.repository}:${tag}`), `${upgrade.repository}:${commit}-next`];
    await runCommand(["docker", "rmi", ...names]).catch(() => "");
    return { repository: release.repository, tags, digest: release.digest, upgradeDigest: upgrade.digest };
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
}
