// Dry-run (`?dryRun=true`) arrives with the sandbox issue. Its tests run once the API's document declares it
// (packages/sdk/openapi.json is checked against the server by artifacts.test.ts, so this follows the API).
import document from "../../openapi.json" with { type: "json" };

const params = (path: string) => ((document.paths as Record<string, { put?: { parameters?: { name: string }[] } }>)[path]?.put?.parameters ?? []).map((p) => p.name);
export const API_HAS_DRY_RUN = params("/partner/v1/listings/{externalListingId}").includes("dryRun") && params("/partner/v1/brokers/{externalBrokerId}").includes("dryRun");
