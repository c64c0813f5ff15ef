import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Component, InfraPaths } from "./component.ts";
import { type SecuredProfile, SECURED_USERS } from "./secured/profile.ts";
import { isPortOpen, readPid, removeFile, startDetached, stopPid } from "./process.ts";
import { redisServerBinary } from "./system-packages.ts";

export const REDIS_PORT = 56379;

/** PING answered with PONG; secured: over TLS verified against the CA, after AUTH. */
async function ping(port: number, secured?: { ca: string; user: string; password: string }): Promise<boolean> {
  const { promise, resolve } = Promise.withResolvers<boolean>();
  const timer = setTimeout(() => resolve(false), secured ? 3000 : 1000);
  const request = secured ? `AUTH ${secured.user} ${secured.password}\r\nPING\r\n` : "PING\r\n";
  let answer = "";
  try {
    const socket = await Bun.connect({
      hostname: "127.0.0.1",
      port,
      ...(secured ? { tls: { ca: secured.ca, serverName: "localhost" } } : {}),
      socket: {
        // Over TLS, only once the handshake is done (a write before it is lost).
        handshake(s, ok) {
          if (ok) s.write(request);
          else resolve(false);
        },
        data(s, chunk) {
          answer += chunk.toString();
          if (!answer.includes("PONG") && !answer.startsWith("-")) return;
          clearTimeout(timer);
          resolve(answer.includes("+PONG"));
          s.end();
        },
        error() {
          resolve(false);
        },
      },
    });
    if (!secured) socket.write(request);
  } catch {
    clearTimeout(timer);
    return false;
  }
  return promise;
}

/**
 * Redis on loopback: the default profile's (port 56379, no password), or with a secured profile its own server:
 * TLS only, the default user off, one ACL user with the profile's password.
 */
export function redisComponent(paths: InfraPaths, secured?: SecuredProfile): Component {
  const base = secured?.dir ?? paths.dataDir;
  const dir = join(base, "redis");
  const logFile = join(base, "logs", "redis.log");
  const pidFile = join(dir, "server.pid");
  const port = secured?.ports.redis ?? REDIS_PORT;
  const auth = secured
    ? { ca: readFileSync(secured.certs.caFile, "utf8"), user: SECURED_USERS.redis, password: secured.secrets.redis }
    : undefined;
  return {
    name: "redis",
    env: {
      name: "REDIS_URL",
      value: auth
        ? `rediss://${auth.user}:${encodeURIComponent(auth.password)}@127.0.0.1:${port}`
        : `redis://127.0.0.1:${REDIS_PORT}`,
    },
    ...(secured ? { companions: { REDIS_TLS_CA_FILE: secured.certs.caFile } } : {}),
    logFile,
    readyTimeoutMs: 20_000,
    async running() {
      return readPid(pidFile) !== null;
    },
    async start() {
      const bin = await redisServerBinary();
      if (await isPortOpen(port)) {
        throw new Error(`port ${port} is in use by a process this runner did not start; stop it or set REDIS_URL`);
      }
      mkdirSync(dir, { recursive: true });
      startDetached({
        cmd: bin,
        args: [
          "--bind",
          "127.0.0.1",
          ...(secured
            ? [
                "--port",
                "0",
                "--tls-port",
                String(port),
                "--tls-cert-file",
                secured.certs.serverCertFile,
                "--tls-key-file",
                secured.certs.serverKeyFile,
                "--tls-ca-cert-file",
                secured.certs.caFile,
                // Client certificates are checked when sent (mutual TLS), not required.
                "--tls-auth-clients",
                "optional",
                "--user",
                "default",
                "off",
                "--user",
                SECURED_USERS.redis,
                "on",
                `>${secured.secrets.redis}`,
                "~*",
                "&*",
                "+@all",
              ]
            : ["--port", String(REDIS_PORT)]),
          "--dir",
          dir,
          "--appendonly",
          "yes",
          "--save",
          "",
          "--daemonize",
          "no",
          "--protected-mode",
          "yes",
        ],
        cwd: dir,
        logFile,
        pidFile,
      });
    },
    ready: () => ping(port, auth),
    async stop() {
      const pid = readPid(pidFile);
      if (pid) await stopPid(pid);
      removeFile(pidFile);
    },
  };
}
