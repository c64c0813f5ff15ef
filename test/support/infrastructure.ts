// Where the test servers come from: URLs in the environment if all are set (they always win); else PSS_TEST_INFRA
// chooses: `testcontainers` (the images of PSS_*_IMAGE), `local` (the local infrastructure runner, which starts only
// the servers whose URL is not set), or, unset, testcontainers when a Docker engine answers and the local runner
// otherwise.
import { S3_VARIABLES, up, URL_VARIABLES, type InfraUrls } from "../../infra/src/index.ts";
import { dockerEngineAvailable, startWithTestcontainers } from "./testcontainers.ts";

export type { InfraUrls };

export async function provideInfrastructure(
  env: Record<string, string | undefined>,
): Promise<{ urls: InfraUrls; source: string }> {
  if (URL_VARIABLES.every((v) => env[v])) {
    // The object store comes with its bucket and credentials.
    const names = [...URL_VARIABLES, ...S3_VARIABLES].filter((v) => env[v]);
    return { urls: Object.fromEntries(names.map((v) => [v, env[v]!])) as InfraUrls, source: "environment" };
  }
  if (env.PSS_TEST_INFRA === "testcontainers" || (env.PSS_TEST_INFRA !== "local" && (await dockerEngineAvailable()))) {
    const { urls, stop } = await startWithTestcontainers();
    process.once("beforeExit", () => void stop());
    return { urls, source: "testcontainers" };
  }
  // Tests use the object store whatever MEDIA_STORAGE says (the media tests run on both implementations).
  return { urls: await up({ ...env, MEDIA_STORAGE: undefined }), source: "local infrastructure runner" };
}
