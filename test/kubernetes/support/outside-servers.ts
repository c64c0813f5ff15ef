// The servers of the production install (chart-production.test.ts), outside the release and reached by URL as managed
// services would be, at the node's address (the pods reach the host there), each with credentials of its own that
// NODE_ENV=production accepts:
// - PostgreSQL: the test run's server, forwarded from the node's address; a login role with a random password and
//   databases of this test (the release's and the empty one a restore goes into);
// - OpenSearch: the test run's server, forwarded; an index alias of this test;
// - Redis: a redis-server of this test with a password (a URL that carries a credential);
// - Kafka: a broker of this test (the shared one advertises a loopback address, which no pod can reach);
// - S3: an S3Proxy of this test with a random key pair;
// - SMTP: a mail relay in this process that keeps what it receives.
import { rmSync, mkdtempSync } from "node:fs";
import { createServer, connect, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { redisServerBinary } from "../../../infra/src/system-packages.ts";
import { startSmtpSink, type SmtpSink } from "../../../services/leads/test/support/smtp-sink.ts";
import { freePort } from "../../support/ports.ts";
import { startPrivateKafka, type PrivateKafka } from "../../support/private-kafka.ts";
import { startPrivateS3, type PrivateS3 } from "../../support/private-s3.ts";

const secret = () => crypto.randomUUID().replace(/-/g, "");

/** A TCP forwarder from host:<free port> to target: the pods' way to a server that listens on loopback only. */
async function forward(
  host: string,
  target: { host: string; port: number },
): Promise<{ port: number; server: Server }> {
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", close).on("close", close);
    upstream.on("error", close).on("close", close);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { port: (server.address() as { port: number }).port, server };
}

export interface OutsideServers {
  databaseUrl: string;
  /** A new, empty database of the same server and role: where the restore goes. */
  restoreDatabaseUrl: string;
  /** This test's view of them (loopback), for its own checks. */
  localDatabaseUrl: string;
  localRestoreDatabaseUrl: string;
  redisUrl: string;
  opensearchUrl: string;
  searchAlias: string;
  kafkaBrokers: string;
  s3: PrivateS3;
  s3Credentials: { accessKeyId: string; secretAccessKey: string };
  smtp: SmtpSink;
  smtpFrom: string;
  stop(): Promise<void>;
}

export async function startOutsideServers(opts: {
  nodeIp: string;
  token: string;
  /** The test run's servers (npm test's), reached on loopback. */
  databaseUrl: string;
  opensearchUrl: string;
}): Promise<OutsideServers> {
  const stops: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => {});
  };
  try {
    const admin = postgres(opts.databaseUrl, { max: 1, onnotice: () => {} });
    stops.push(() => admin.end({ timeout: 2 }));
    const role = `pss_prod_${opts.token}`;
    const password = secret();
    const [database, restoreDatabase] = [`${role}_db`, `${role}_restore`];
    await admin.unsafe(`CREATE ROLE "${role}" LOGIN PASSWORD '${password}'`);
    stops.push(() => admin.unsafe(`DROP ROLE IF EXISTS "${role}"`));
    for (const db of [database, restoreDatabase]) {
      await admin.unsafe(`CREATE DATABASE "${db}" OWNER "${role}"`);
      stops.push(() => admin.unsafe(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`));
    }
    const pg = new URL(opts.databaseUrl);
    const pgForward = await forward(opts.nodeIp, { host: pg.hostname, port: Number(pg.port || 5432) });
    stops.push(async () => pgForward.server.close());
    const urlOf = (host: string, port: string | number, db: string) =>
      `postgres://${role}:${password}@${host}:${port}/${db}`;

    const os = new URL(opts.opensearchUrl);
    const osForward = await forward(opts.nodeIp, { host: os.hostname, port: Number(os.port || 9200) });
    stops.push(async () => osForward.server.close());
    const searchAlias = `pss-prod-${opts.token}`;
    stops.push(async () => {
      const aliased = await fetch(`${opts.opensearchUrl}/_alias/${searchAlias}`).then((r) => (r.ok ? r.json() : {}));
      for (const index of Object.keys(aliased as object))
        await fetch(`${opts.opensearchUrl}/${index}`, { method: "DELETE" });
    });

    const redisPassword = secret();
    const redisPort = await freePort();
    const redisDir = mkdtempSync(join(tmpdir(), "pss-prod-redis-"));
    const redis = Bun.spawn(
      [
        await redisServerBinary(),
        "--bind",
        opts.nodeIp,
        "--port",
        String(redisPort),
        "--requirepass",
        redisPassword,
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        redisDir,
      ],
      { stdout: "ignore", stderr: "ignore" },
    );
    stops.push(async () => {
      redis.kill("SIGTERM");
      await redis.exited;
      rmSync(redisDir, { recursive: true, force: true });
    });

    const kafka: PrivateKafka = await startPrivateKafka({ host: opts.nodeIp });
    stops.push(() => kafka.destroy());
    const s3Credentials = { accessKeyId: `prod-${opts.token}`, secretAccessKey: secret() };
    const s3 = await startPrivateS3({ host: opts.nodeIp, credentials: s3Credentials });
    stops.push(() => s3.destroy());
    const smtp = await startSmtpSink({ host: opts.nodeIp });
    stops.push(() => smtp.stop());

    return {
      databaseUrl: urlOf(opts.nodeIp, pgForward.port, database),
      restoreDatabaseUrl: urlOf(opts.nodeIp, pgForward.port, restoreDatabase),
      localDatabaseUrl: urlOf(pg.hostname, pg.port || 5432, database),
      localRestoreDatabaseUrl: urlOf(pg.hostname, pg.port || 5432, restoreDatabase),
      redisUrl: `redis://:${redisPassword}@${opts.nodeIp}:${redisPort}`,
      opensearchUrl: `http://${opts.nodeIp}:${osForward.port}`,
      searchAlias,
      kafkaBrokers: kafka.brokers,
      s3,
      s3Credentials,
      smtp,
      smtpFrom: `Listings <leads-${opts.token}@example.com>`,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
