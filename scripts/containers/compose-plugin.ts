// The compose v2 plugin (`docker compose`): Debian 12 has only docker-compose 1.29, and testcontainers and the tests
// call `docker compose`. Built from its Go module (the Go module proxy) with the machine's Go, once per machine:
// the binary is cached in ~/.cache/partner-syndication-service/ and copied into Docker's plugin directory.
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultPaths } from "../../infra/src/index.ts";
import { runCommand } from "../../infra/src/process.ts";

export const COMPOSE_VERSION = "v2.40.3";
const PLUGIN = "/usr/local/lib/docker/cli-plugins/docker-compose";

async function composeAnswers(): Promise<boolean> {
  const proc = Bun.spawn(["docker", "compose", "version"], { stdout: "ignore", stderr: "ignore", stdin: "ignore" });
  return (await proc.exited) === 0;
}

/** Where the built compose binary is kept (it also runs on its own, as `docker-compose`, without an engine). */
export function composeBinaryPath(): string {
  return join(defaultPaths().cacheDir, "compose", `docker-compose-${COMPOSE_VERSION}`);
}

/** The compose binary, built from the Go module proxy when missing and `build` (else null when missing). */
export async function ensureComposeBinary(opts: {
  build: boolean;
  log: (line: string) => void;
}): Promise<string | null> {
  const cached = composeBinaryPath();
  if (!existsSync(cached)) {
    if (!opts.build) return null;
    const go = Bun.which("go") ?? (existsSync("/usr/local/go/bin/go") ? "/usr/local/go/bin/go" : null);
    if (!go)
      throw new Error("`docker compose` is not installed, and there is no Go to build it from the Go module proxy");
    const started = Date.now();
    opts.log(`building the compose ${COMPOSE_VERSION} plugin from the Go module proxy (first run only, about 2.5 min)`);
    const info = JSON.parse(
      await runCommand([go, "mod", "download", "-json", `github.com/docker/compose/v2@${COMPOSE_VERSION}`], {
        cwd: tmpdir(),
      }),
    ) as { Dir: string };
    // The module cache is read-only; `go install` of a module with replace directives is refused, so build a copy.
    const src = mkdtempSync(join(tmpdir(), "compose-src-"));
    // Several runs on one machine may build at once: each writes its own file and renames it into place.
    const partial = `${cached}.building-${process.pid}`;
    try {
      cpSync(info.Dir, src, { recursive: true });
      await runCommand(["chmod", "-R", "u+w", src]);
      mkdirSync(join(cached, ".."), { recursive: true });
      await runCommand(
        [
          go,
          "build",
          "-trimpath",
          "-ldflags",
          `-s -w -X github.com/docker/compose/v2/internal.Version=${COMPOSE_VERSION}`,
          "-o",
          partial,
          "./cmd",
        ],
        { cwd: src, env: { CGO_ENABLED: "0" } },
      );
      renameSync(partial, cached);
    } finally {
      rmSync(src, { recursive: true, force: true });
      rmSync(partial, { force: true });
    }
    opts.log(`built the compose plugin in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  return cached;
}

export async function ensureComposePlugin(opts: { build: boolean; log: (line: string) => void }): Promise<void> {
  if (await composeAnswers()) return;
  const cached = await ensureComposeBinary(opts);
  if (!cached) throw new Error("`docker compose` is not installed");
  mkdirSync(join(PLUGIN, ".."), { recursive: true });
  copyFileSync(cached, PLUGIN);
  chmodSync(PLUGIN, 0o755);
}
