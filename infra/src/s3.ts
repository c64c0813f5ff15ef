// An S3-compatible object store for image variants: S3Proxy (Maven Central) on its filesystem-nio2 backend, run on
// the local JDK like Kafka and OpenSearch. Objects live as files under .data/s3/data/<bucket>/, the bucket being a
// directory the runner creates (S3Proxy's filesystem backends map buckets to directories).
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Component, InfraPaths } from "./component.ts";
import { javaBinary, resolveJars } from "./maven.ts";
import { isPortOpen, readPid, removeFile, startDetached, stopPid } from "./process.ts";

export const S3_PORT = 59000;

/**
 * The local server's bucket and credentials, handed to the services with S3_ENDPOINT. Loopback only and
 * fixed on purpose (like the local PostgreSQL's pss/pss): nothing outside this machine can reach it.
 */
export const LOCAL_S3 = {
  S3_BUCKET: "pss-media",
  S3_REGION: "us-east-1",
  S3_ACCESS_KEY_ID: "pss-local",
  S3_SECRET_ACCESS_KEY: "pss-local-secret",
} as const;

/** S3Proxy's properties for a loopback server of LOCAL_S3's bucket and credentials, its data under dataDir. */
export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

const LOCAL_CREDENTIALS: S3Credentials = {
  accessKeyId: LOCAL_S3.S3_ACCESS_KEY_ID,
  secretAccessKey: LOCAL_S3.S3_SECRET_ACCESS_KEY,
};

export function s3ProxyProperties(endpoint: string, dataDir: string, credentials = LOCAL_CREDENTIALS): string {
  return [
    `s3proxy.endpoint=${endpoint}`,
    // Signed requests only (SigV4 or V2), as with a real provider: an unsigned client is refused.
    "s3proxy.authorization=aws-v2-or-v4",
    `s3proxy.identity=${credentials.accessKeyId}`,
    `s3proxy.credential=${credentials.secretAccessKey}`,
    "jclouds.provider=filesystem-nio2",
    `jclouds.filesystem.basedir=${dataDir}`,
    "",
  ].join("\n");
}

/** A client of LOCAL_S3's bucket on the server at endpoint, signed with its credentials (or the ones given). */
export function localS3Client(endpoint: string, credentials = LOCAL_CREDENTIALS): Bun.S3Client {
  return new Bun.S3Client({
    endpoint,
    bucket: LOCAL_S3.S3_BUCKET,
    region: LOCAL_S3.S3_REGION,
    ...credentials,
  });
}

export function s3Component(paths: InfraPaths): Component {
  const dir = join(paths.dataDir, "s3");
  const dataDir = join(dir, "data");
  const logFile = join(paths.dataDir, "logs", "s3.log");
  const pidFile = join(dir, "server.pid");
  const propsFile = join(dir, "s3proxy.properties");
  const pom = join(paths.root, "infra", "maven", "s3proxy", "pom.xml");
  const endpoint = `http://127.0.0.1:${S3_PORT}`;

  return {
    name: "s3",
    env: { name: "S3_ENDPOINT", value: endpoint },
    companions: { ...LOCAL_S3 },
    logFile,
    readyTimeoutMs: 60_000,
    async running() {
      return readPid(pidFile) !== null;
    },
    async start() {
      const libs = await resolveJars(pom, paths.cacheDir, "s3proxy");
      if (await isPortOpen(S3_PORT)) {
        throw new Error(`port ${S3_PORT} is in use by a process this runner did not start; stop it or set S3_ENDPOINT`);
      }
      // The filesystem backend reads a directory that others may read as a public-read bucket: keep it private.
      const bucketDir = join(dataDir, LOCAL_S3.S3_BUCKET);
      mkdirSync(bucketDir, { recursive: true });
      chmodSync(bucketDir, 0o700);
      writeFileSync(propsFile, s3ProxyProperties(endpoint, dataDir));
      startDetached({
        cmd: javaBinary(),
        args: [
          "-Xms64m",
          "-Xmx256m",
          "-XX:+UseSerialGC",
          "-Djava.awt.headless=true",
          "-DLOG_LEVEL=warn",
          "-cp",
          `${libs}/*`,
          "org.gaul.s3proxy.Main",
          "--properties",
          propsFile,
        ],
        cwd: dir,
        logFile,
        pidFile,
      });
    },
    async ready() {
      // A signed listing of the bucket: the server answers, the credentials work and the bucket exists.
      await localS3Client(endpoint).list({ maxKeys: 1 });
      return true;
    },
    async stop() {
      const pid = readPid(pidFile);
      if (pid) await stopPid(pid, { graceMs: 20_000 });
      removeFile(pidFile);
    },
  };
}
