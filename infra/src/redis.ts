import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Component, InfraPaths } from "./component.ts";
import { isPortOpen, readPid, removeFile, startDetached, stopPid } from "./process.ts";
import { redisServerBinary } from "./system-packages.ts";

export const REDIS_PORT = 56379;

async function ping(port: number): Promise<boolean> {
  const { promise, resolve } = Promise.withResolvers<boolean>();
  const timer = setTimeout(() => resolve(false), 1000);
  try {
    const socket = await Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        data(s, chunk) {
          clearTimeout(timer);
          resolve(chunk.toString().startsWith("+PONG"));
          s.end();
        },
        error() {
          resolve(false);
        },
      },
    });
    socket.write("PING\r\n");
  } catch {
    clearTimeout(timer);
    return false;
  }
  return promise;
}

export function redisComponent(paths: InfraPaths): Component {
  const dir = join(paths.dataDir, "redis");
  const logFile = join(paths.dataDir, "logs", "redis.log");
  const pidFile = join(dir, "server.pid");
  return {
    name: "redis",
    env: { name: "REDIS_URL", value: `redis://127.0.0.1:${REDIS_PORT}` },
    logFile,
    readyTimeoutMs: 20_000,
    async running() {
      return readPid(pidFile) !== null;
    },
    async start() {
      const bin = await redisServerBinary();
      if (await isPortOpen(REDIS_PORT)) {
        throw new Error(
          `port ${REDIS_PORT} is in use by a process this runner did not start; stop it or set REDIS_URL`,
        );
      }
      mkdirSync(dir, { recursive: true });
      startDetached({
        cmd: bin,
        args: [
          "--bind",
          "127.0.0.1",
          "--port",
          String(REDIS_PORT),
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
    ready: () => ping(REDIS_PORT),
    async stop() {
      const pid = readPid(pidFile);
      if (pid) await stopPid(pid);
      removeFile(pidFile);
    },
  };
}
