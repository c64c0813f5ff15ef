// An S3Proxy of a test's own, on a free loopback port with its own data directory, that the test may stop and
// start again (an outage of the object store) without touching the shared one everybody else's tests use. It
// runs the same jars and properties as the infrastructure runner (infra/src/s3.ts), from the runner's cache; a
// test skips when they were never fetched (it never downloads them itself).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { defaultPaths, LOCAL_S3 } from "../../infra/src/index.ts";
import { localS3Client, type S3Credentials, s3ProxyProperties } from "../../infra/src/s3.ts";
import { cachedJars, javaBinary } from "../../infra/src/maven.ts";
import { freePort } from "./ports.ts";

export interface PrivateS3 {
  endpoint: string;
  /** MEDIA_STORAGE=s3 and the S3_* variables that point a service at this server. */
  env: Record<string, string>;
  /** Stops the server (SIGTERM, then waits for the process to end): requests are refused meanwhile. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data, and waits until it answers. */
  start(): Promise<void>;
  /** Stops it for good and removes its data. */
  destroy(): Promise<void>;
}

/** Why a private S3Proxy cannot be had here, or null when it can. */
export function privateS3Unavailable(): string | null {
  const paths = defaultPaths();
  if (!cachedJars(join(paths.root, "infra", "maven", "s3proxy", "pom.xml"), paths.cacheDir, "s3proxy")) {
    return `the S3Proxy jars are not in ${paths.cacheDir} (run 'npm run infra -- up s3' once)`;
  }
  if (Bun.spawnSync([javaBinary(), "-version"], { stderr: "ignore", stdout: "ignore" }).exitCode !== 0)
    return "no Java runtime (java -version failed)";
  return null;
}

/**
 * `host`: the address it listens on and is reached at (default loopback); `credentials`: its own key pair (default
 * the repository's local one, which NODE_ENV=production refuses).
 */
export async function startPrivateS3(
  opts: { host?: string; credentials?: { accessKeyId: string; secretAccessKey: string } } = {},
): Promise<PrivateS3> {
  const paths = defaultPaths();
  const libs = cachedJars(join(paths.root, "infra", "maven", "s3proxy", "pom.xml"), paths.cacheDir, "s3proxy");
  if (!libs) throw new Error(privateS3Unavailable() ?? "S3Proxy jars missing");
  const dir = mkdtempSync(join(tmpdir(), "pss-private-s3-"));
  const dataDir = join(dir, "data");
  mkdirSync(join(dataDir, LOCAL_S3.S3_BUCKET), { recursive: true, mode: 0o700 });
  const port = await freePort();
  const endpoint = `http://${opts.host ?? "127.0.0.1"}:${port}`;
  const credentials: S3Credentials = opts.credentials ?? {
    accessKeyId: LOCAL_S3.S3_ACCESS_KEY_ID,
    secretAccessKey: LOCAL_S3.S3_SECRET_ACCESS_KEY,
  };
  const props = join(dir, "s3proxy.properties");
  writeFileSync(props, s3ProxyProperties(endpoint, dataDir, credentials));
  const client = localS3Client(endpoint, credentials);
  let proc: Subprocess | null = null;

  async function start() {
    if (proc) return;
    proc = Bun.spawn(
      [
        javaBinary(),
        "-Xms32m",
        "-Xmx192m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-Djava.awt.headless=true",
        "-DLOG_LEVEL=warn",
        "-cp",
        `${libs}/*`,
        "org.gaul.s3proxy.Main",
        "--properties",
        props,
      ],
      { cwd: dir, stdout: "ignore", stderr: "ignore" },
    );
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await client.list({ maxKeys: 1 });
        return;
      } catch (err) {
        if (proc.exitCode !== null) throw new Error(`private S3Proxy exited with ${proc.exitCode}`);
        if (Date.now() > deadline)
          throw new Error(`private S3Proxy did not answer within 60 s: ${(err as Error).message}`);
        await Bun.sleep(200);
      }
    }
  }

  async function stop() {
    const p = proc;
    proc = null;
    if (!p) return;
    p.kill("SIGTERM");
    const exited = await Promise.race([p.exited.then(() => true), Bun.sleep(15_000).then(() => false)]);
    if (!exited) {
      p.kill("SIGKILL");
      await p.exited;
    }
  }

  await start();
  return {
    endpoint,
    env: {
      MEDIA_STORAGE: "s3",
      S3_ENDPOINT: endpoint,
      S3_BUCKET: LOCAL_S3.S3_BUCKET,
      S3_REGION: LOCAL_S3.S3_REGION,
      S3_ACCESS_KEY_ID: credentials.accessKeyId,
      S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    },
    stop,
    start,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
