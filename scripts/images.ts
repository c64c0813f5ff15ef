// `npm run images`: builds every image docker-compose.yml runs from sources reachable without an image registry
// (Debian's mirror, Maven Central, the npm registry), tags them locally and writes `.env` beside docker-compose.yml
// pointing compose's image variables at them. Where a registry is reachable nothing needs this: compose's defaults
// are the official images. docs/operations.md ("Containers") describes the images and their variables.
//
// `npm run images -- --push REGISTRY` then tags each with the release version and the commit, pushes it to
// REGISTRY (e.g. registry.example.com/team; `docker login` first where needed) and prints each image's
// repository@digest: what the Helm chart's image.repository and image.digest take (docs/operations.md, "Kubernetes").
import { buildImages } from "./containers/build-images.ts";
import { writeComposeEnv } from "./containers/compose-env.ts";
import { ensureEngine, nofileLimit } from "./containers/engine.ts";
import { commitTag, parseRegistry, pushImages, releaseVersion } from "./containers/push-images.ts";

const args = process.argv.slice(2);
let registry: string | null = null;
try {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (arg === "--push") registry = parseRegistry(args[++i]);
    else if (arg.startsWith("--push=")) registry = parseRegistry(arg.slice("--push=".length));
    else throw new Error(`unknown argument '${arg}' (usage: npm run images [-- --push REGISTRY])`);
  }
} catch (err) {
  console.error(`images: ${(err as Error).message}`);
  process.exit(2);
}

const started = Date.now();
const engine = await ensureEngine({ install: true });
if (!engine.ok) {
  console.error(`images: ${engine.reason}`);
  process.exit(1);
}
const [built] = await Promise.all([
  buildImages({ log: (line) => console.error(`images: ${line}`) }),
  engine.composePlugin,
]);
// OpenSearch's nofile ulimit may not exceed the engine's own limit (compose refuses to start the container).
const nofile = nofileLimit();
const envFile = writeComposeEnv({
  ...built.variables,
  ...(nofile < 65536 ? { PSS_OPENSEARCH_NOFILE: String(nofile) } : {}),
});
console.error(
  `images: ${Object.keys(built.variables).length} images ready in ${((Date.now() - started) / 1000).toFixed(0)} s; ${envFile} points docker compose at them`,
);
if (!registry) {
  for (const [name, tag] of Object.entries(built.variables)) console.log(`${name}=${tag}`);
} else {
  const tags = [releaseVersion(), await commitTag()];
  try {
    const pushed = await pushImages({
      registry,
      images: built.variables,
      tags,
      log: (line) => console.error(`images: ${line}`),
    });
    console.error(`images: pushed ${pushed.length} images to ${registry} as ${tags.join(" and ")}; their digests:`);
    for (const p of pushed) console.log(`${p.variable}=${p.repository}@${p.digest}`);
  } catch (err) {
    console.error(`images: ${(err as Error).message}`);
    process.exit(1);
  }
}
// An engine this command started keeps running: `docker compose up` is what comes next.
