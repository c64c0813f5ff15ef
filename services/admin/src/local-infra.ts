// The local infrastructure runner as the admin CLI sees it: the URLs `npm start` gives the services, and whether
// each server answers. Loaded at run time because the container image has only infra/package.json, not its source:
// there the import fails, the CLI simply has no local defaults and the URLs must be set.
import type { Server } from "./admin-config.ts";

export interface LocalInfra {
  /** URL per environment variable (DATABASE_URL, …), exactly as `npm start` passes them. */
  urls: Record<string, string>;
}

const RUNNER_MODULE = "@pss/infra";

export async function findLocalInfra(): Promise<LocalInfra | null> {
  let runner: typeof import("@pss/infra");
  try {
    runner = await import(RUNNER_MODULE);
  } catch {
    return null;
  }
  // With each URL, what goes with it (the local object store's bucket and credentials).
  return {
    urls: Object.fromEntries(
      runner
        .components(runner.defaultPaths())
        .flatMap((c) => [[c.env.name, c.env.value], ...Object.entries(c.companions ?? {})]),
    ),
  };
}

/** host and port of a URL or of Kafka's first `host:port`. */
export function addressOf(value: string): { host: string; port: number } | null {
  const first = value.split(",")[0]!.trim();
  try {
    const u = new URL(first.includes("://") ? first : `tcp://${first}`);
    const port = Number(u.port || (u.protocol === "https:" ? 443 : 80));
    return { host: u.hostname.replace(/^\[|\]$/g, ""), port };
  } catch {
    return null;
  }
}

/**
 * Whether something listens at the address. Only a TCP connect: the runner's own readiness checks may install
 * packages or create the database, which a read-only command must never do.
 */
export async function answers(value: string, timeoutMs = 2000): Promise<boolean> {
  const address = addressOf(value);
  if (!address) return false;
  const attempt = Bun.connect({ hostname: address.host, port: address.port, socket: { data() {} } }).then(
    (socket) => {
      socket.end();
      return true;
    },
    () => false,
  );
  return Promise.race([attempt, Bun.sleep(timeoutMs).then(() => false)]);
}

export const SERVER_NAMES: Record<Server, string> = {
  postgres: "PostgreSQL",
  redis: "Redis",
  kafka: "Kafka",
  opensearch: "OpenSearch",
  s3: "S3 server",
};

/** The servers among `local` that do not answer at `urls`, as one sentence for the operator; null when all answer. */
export async function localServersDown(
  local: readonly Server[],
  urlOf: (server: Server) => string,
): Promise<string | null> {
  const checked = await Promise.all(local.map(async (s) => ({ s, ok: await answers(urlOf(s)) })));
  const down = checked.filter((c) => !c.ok).map((c) => SERVER_NAMES[c.s]);
  if (down.length === 0) return null;
  return `the local ${down.join(", ")} ${down.length === 1 ? "is" : "are"} not running (no URL is set, so the local infrastructure is used): run npm start or npm run infra -- up`;
}
