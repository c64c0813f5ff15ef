// `npm run images -- --push REGISTRY`: the images `npm run images` built, tagged with the release version (the chart's
// appVersion, which is also the chart's default image tag) and the commit, pushed with `docker push` (log in
// first with `docker login REGISTRY` where the registry wants it), and their digests printed: what the chart's
// image.repository and image.digest (or image.tag) take. docs/operations.md, "Kubernetes".
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runCommand } from "../../infra/src/process.ts";
import { IMAGE_VARIABLES, type ImageVariable } from "./image-variables.ts";

const ROOT = join(import.meta.dir, "..", "..");

/** The repository name each image gets in a registry: the service image under the chart's name, the rest pss-<name>. */
export function repositoryName(variable: ImageVariable): string {
  const image = IMAGE_VARIABLES.find((v) => v.name === variable)?.image;
  return image === "service" ? "partner-syndication-service" : `pss-${image}`;
}

/** The release version: the chart's appVersion (the release process sets it; the chart's default image tag). */
export function releaseVersion(): string {
  const chart = readFileSync(join(ROOT, "deploy", "helm", "partner-syndication-service", "Chart.yaml"), "utf8");
  const version = /^appVersion:\s*"?([^"\s]+)"?\s*$/m.exec(chart)?.[1];
  if (!version) throw new Error("deploy/helm/partner-syndication-service/Chart.yaml has no appVersion");
  return version;
}

/** The commit the images were built from (12 hex digits), `-dirty` when the checkout has changes. */
export async function commitTag(): Promise<string> {
  const commit = (await runCommand(["git", "rev-parse", "--short=12", "HEAD"], { cwd: ROOT })).trim();
  const dirty = (await runCommand(["git", "status", "--porcelain", "--untracked-files=no"], { cwd: ROOT })).trim();
  return dirty ? `${commit}-dirty` : commit;
}

/** `registry.example.com[:port][/path]`: a registry address, no scheme, no trailing slash. */
export function parseRegistry(value: string | undefined): string {
  const registry = (value ?? "").trim().replace(/\/+$/, "");
  if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:\d{1,5})?(\/[a-z0-9._-]+)*$/i.test(registry))
    throw new Error(
      `--push needs a registry address such as registry.example.com or 127.0.0.1:5000/team (no scheme), got '${value ?? ""}'`,
    );
  return registry;
}

export interface PushedImage {
  variable: ImageVariable;
  /** <registry>/<name> */
  repository: string;
  tags: string[];
  /** sha256:… of the pushed manifest */
  digest: string;
}

/** The digest `docker push` reports for the tag it pushed ("<tag>: digest: sha256:… size: N"). */
export function pushedDigest(output: string): string | null {
  return /digest: (sha256:[0-9a-f]{64})/.exec(output)?.[1] ?? null;
}

/** Tags each local image as <registry>/<name>:<tag> for every tag and pushes it; the pushed digests. */
export async function pushImages(opts: {
  registry: string;
  /** Image variable → local tag (what buildImages returned). */
  images: Partial<Record<ImageVariable, string>>;
  tags: string[];
  log: (line: string) => void;
}): Promise<PushedImage[]> {
  const pushed: PushedImage[] = [];
  for (const [variable, local] of Object.entries(opts.images) as [ImageVariable, string][]) {
    const repository = `${opts.registry}/${repositoryName(variable)}`;
    let digest = "";
    const t0 = Date.now();
    for (const tag of opts.tags) {
      await runCommand(["docker", "tag", local, `${repository}:${tag}`]);
      const out = await runCommand(["docker", "push", `${repository}:${tag}`]);
      const got = pushedDigest(out);
      if (!got) throw new Error(`docker push ${repository}:${tag} reported no digest: ${out.slice(-300)}`);
      if (digest && got !== digest)
        throw new Error(`${repository}: the tags got different digests (${digest}, ${got})`);
      digest = got;
    }
    opts.log(`pushed ${repository}:${opts.tags.join(",")} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    if (!digest) throw new Error(`${repository}: no tag to push`);
    pushed.push({ variable, repository, tags: opts.tags, digest });
  }
  return pushed;
}
