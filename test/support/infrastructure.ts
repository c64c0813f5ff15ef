// Where the test servers come from: URLs in the environment if all are set; else testcontainers when a
// Docker engine answers; else the local infrastructure runner (what CI on our Docker-less machines uses).
import { up, URL_VARIABLES, type InfraUrls } from "../../infra/src/index.ts";
import { dockerEngineAvailable, startWithTestcontainers } from "./testcontainers.ts";

export type { InfraUrls };

export async function provideInfrastructure(env: Record<string, string | undefined>): Promise<{ urls: InfraUrls; source: string }> {
  if (URL_VARIABLES.every((v) => env[v])) {
    return { urls: Object.fromEntries(URL_VARIABLES.map((v) => [v, env[v]!])) as InfraUrls, source: "environment" };
  }
  if (env.PSS_TEST_INFRA !== "local" && (await dockerEngineAvailable())) {
    const { urls, stop } = await startWithTestcontainers();
    process.once("beforeExit", () => void stop());
    return { urls, source: "testcontainers" };
  }
  return { urls: await up(env), source: "local infrastructure runner" };
}
