// Which containers `docker compose up` starts, as compose itself reads docker-compose.yml (`config`, no engine
// needed): the bundled servers follow the URLs, each running unless .env points its URL elsewhere, so development
// (no .env) has them all and production with your own servers only the services, the balancer and the one-shots.
// The compose binary is the one npm test's container part uses (built from the Go module proxy when missing).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureComposeBinary } from "../../scripts/containers/compose-plugin.ts";

const root = join(import.meta.dir, "..", "..");
const compose = await ensureComposeBinary({ build: true, log: (line) => console.error(`compose: ${line}`) }).catch(
  (err: Error) => (console.error(`compose config tests skipped: ${err.message}`), null),
);
const it = compose ? test : test.skip;
const dir = mkdtempSync(join(tmpdir(), "pss-compose-servers-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SERVICES = [
  "api",
  "balancer",
  "indexer",
  "leads",
  "media",
  "migrate",
  "outbox-relay",
  "portal",
  "webhook-key",
  "webhooks",
];
const SERVERS = ["kafka", "opensearch", "postgres", "redis", "s3", "smtp-sink"];
/** Every server's URL pointing elsewhere, as an operator with managed servers and a mail relay writes .env. */
const OWN_SERVERS = {
  DATABASE_URL: "postgres://pss:s3cret@db.example.com:5432/pss",
  REDIS_URL: "rediss://cache.example.com:6380",
  KAFKA_BROKERS: "b-1.kafka.example.com:9094,b-2.kafka.example.com:9094",
  OPENSEARCH_URL: "https://search.example.com",
  S3_ENDPOINT: "https://s3.eu-west-1.amazonaws.com",
  SMTP_HOST: "smtp.example.com",
};

interface Config {
  services: Record<
    string,
    { depends_on?: Record<string, { condition: string; required: boolean }>; environment?: Record<string, string> }
  >;
}

/** compose with an .env of these lines (and no other environment than a shell's), from the repository's file. */
async function composeWith(env: Record<string, string>, args: string[]): Promise<string> {
  const envFile = join(dir, `env-${crypto.randomUUID()}`);
  writeFileSync(
    envFile,
    Object.entries(env)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(""),
  );
  const proc = Bun.spawn(
    [compose!, "-f", join(root, "docker-compose.yml"), "--project-directory", root, "--env-file", envFile, ...args],
    { env: { PATH: process.env.PATH!, HOME: process.env.HOME! }, stdout: "pipe", stderr: "pipe" },
  );
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`compose ${args.join(" ")} exited ${code}: ${err}`);
  return out;
}

const started = async (env: Record<string, string>, profiles: string[] = []) =>
  (await composeWith(env, [...profiles.flatMap((p) => ["--profile", p]), "config", "--services"]))
    .trim()
    .split("\n")
    .sort();
const config = async (env: Record<string, string>) =>
  JSON.parse(await composeWith(env, ["config", "--format", "json"])) as Config;

describe("the bundled servers follow the URLs", () => {
  it("development (no .env): every bundled server, the services, the balancer and the one-shots", async () => {
    expect(await started({})).toEqual([...SERVICES, ...SERVERS].sort());
  });

  it("NODE_ENV=production with your own servers: only the services, the balancer and the one-shots", async () => {
    expect(await started({ NODE_ENV: "production", ...OWN_SERVERS })).toEqual(SERVICES);
    // The services reach your servers, and wait for no bundled one.
    const { services } = await config({ NODE_ENV: "production", ...OWN_SERVERS });
    expect(services.api!.environment).toMatchObject({
      DATABASE_URL: OWN_SERVERS.DATABASE_URL,
      REDIS_URL: OWN_SERVERS.REDIS_URL,
      KAFKA_BROKERS: OWN_SERVERS.KAFKA_BROKERS,
      OPENSEARCH_URL: OWN_SERVERS.OPENSEARCH_URL,
      S3_ENDPOINT: OWN_SERVERS.S3_ENDPOINT,
      NODE_ENV: "production",
    });
    expect(services.leads!.environment!.SMTP_HOST).toBe(OWN_SERVERS.SMTP_HOST);
    for (const name of SERVICES) {
      const waitsFor = Object.entries(services[name]!.depends_on ?? {}).filter(
        ([dep, d]) => SERVERS.includes(dep) && d.required,
      );
      expect({ name, waitsFor }).toEqual({ name, waitsFor: [] });
    }
  });

  it("development: each service waits until the bundled servers it needs are healthy", async () => {
    const { services } = await config({});
    for (const server of ["postgres", "redis", "kafka", "opensearch", "s3"])
      expect(services.api!.depends_on![server]).toEqual({ condition: "service_healthy", required: false });
    expect(services.migrate!.depends_on!.postgres!.condition).toBe("service_healthy");
    expect(services.leads!.depends_on!["smtp-sink"]!.condition).toBe("service_started");
    expect(services.api!.environment!.DATABASE_URL).toBe("postgres://pss:pss@postgres:5432/pss");
  });

  it("a managed PostgreSQL only: the other bundled servers still run", async () => {
    expect(await started({ NODE_ENV: "production", DATABASE_URL: OWN_SERVERS.DATABASE_URL })).toEqual(
      [...SERVICES, ...SERVERS.filter((s) => s !== "postgres")].sort(),
    );
  });

  it(".env.example as shipped: the bundled servers but the mail sink (it names a relay)", async () => {
    const example = Object.fromEntries(
      (await Bun.file(join(root, ".env.example")).text())
        .split("\n")
        .flatMap((line) =>
          /^[A-Z][A-Z0-9_]*=/.test(line) ? [[line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]] : [],
        ),
    );
    expect(await started(example)).toEqual([...SERVICES, ...SERVERS.filter((s) => s !== "smtp-sink")].sort());
  });

  it("the profile servers starts every bundled server whatever the URLs; naming another profile leaves them to it", async () => {
    expect(await started({ NODE_ENV: "production", ...OWN_SERVERS }, ["servers"])).toEqual(
      [...SERVICES, ...SERVERS].sort(),
    );
    expect(await started({}, ["servers", "monitoring"])).toEqual(
      [...SERVICES, ...SERVERS, "grafana", "prometheus"].sort(),
    );
    // docker-compose.yml's header says so: a named profile replaces the default one.
    expect(await started({}, ["monitoring"])).toEqual([...SERVICES, "grafana", "prometheus"].sort());
  });
});
