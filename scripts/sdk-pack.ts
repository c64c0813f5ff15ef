// The partner SDK (@pss/partner-sdk, with the pss-sync CLI) as the tarball a release carries:
//   npm run --silent sdk:pack                  writes release/pss-partner-sdk-<version>.tgz and prints its path
//   npm run --silent sdk:pack -- --out <dir>   writes it into <dir>
// It refuses a stale OpenAPI document or stale generated types (sdk:generate), builds the published JavaScript and
// declarations (packages/sdk/tsconfig.build.json), then packs the package exactly as npm would publish it. Partners
// install the file with `npm install ./pss-partner-sdk-<version>.tgz`; its dependencies come from the npm registry
// (docs/sdk.md, "Install"). packages/sdk/test/package.test.ts runs this and installs the result into an empty project.
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { runCommand } from "../infra/src/process.ts";
import { staleArtifacts } from "./sdk-openapi.ts";

const ROOT = join(import.meta.dir, "..");
const SDK = join(ROOT, "packages", "sdk");

/** Builds and packs the SDK into `outDir`; returns the tarball's path. */
export async function packSdk(outDir: string): Promise<string> {
  const stale = await staleArtifacts();
  if (stale.length)
    throw new Error(`${stale.join("\n")}\nRun \`npm run --silent sdk:generate\` and commit the result first.`);
  await runCommand([process.execPath, "x", "tsc", "-p", "tsconfig.build.json"], { cwd: SDK });
  mkdirSync(outDir, { recursive: true });
  // The build above is the prepack step's; --ignore-scripts keeps npm from running it a second time.
  const packed = await runCommand(["npm", "pack", "--json", "--ignore-scripts", "--pack-destination", outDir], {
    cwd: SDK,
  });
  const [{ filename }] = JSON.parse(packed) as [{ filename: string }];
  return join(outDir, filename);
}

if (import.meta.main) {
  const at = process.argv.indexOf("--out");
  const outDir = resolve((at > 0 ? process.argv[at + 1] : undefined) ?? join(ROOT, "release"));
  try {
    console.log(await packSdk(outDir));
    process.exit(0);
  } catch (err) {
    console.error(`sdk:pack: ${(err as Error).message}`);
    process.exit(1);
  }
}
