// `npm run images`: builds every image docker-compose.yml runs from sources reachable without an image registry
// (Debian's mirror, Maven Central, the npm registry), tags them locally and writes `.env` beside docker-compose.yml
// pointing compose's image variables at them. Where a registry is reachable nothing needs this: compose's defaults
// are the official images. docs/operations.md ("Containers") describes the images and their variables.
import { buildImages } from "./containers/build-images.ts";
import { writeComposeEnv } from "./containers/compose-env.ts";
import { ensureEngine, nofileLimit } from "./containers/engine.ts";

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
for (const [name, tag] of Object.entries(built.variables)) console.log(`${name}=${tag}`);
// An engine this command started keeps running: `docker compose up` is what comes next.
