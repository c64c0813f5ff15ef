// images/service/Dockerfile (the service image `npm run images` builds without a registry) must run the services
// as the root Dockerfile's runtime stage does: same environment, user, ports, health check and default command.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");

/** The instructions of a Dockerfile (continuation lines joined), from `fromStage` on when given. */
function instructions(file: string, fromStage?: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8").replace(/\\\n\s*/g, "");
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  const start = fromStage ? lines.findIndex((l) => new RegExp(`^FROM .* AS ${fromStage}$`, "i").test(l)) : 0;
  expect(start).toBeGreaterThanOrEqual(0);
  return lines.slice(start);
}

const KEPT = /^(ENV|USER|EXPOSE|HEALTHCHECK|CMD|WORKDIR) /;

test("the local service image has the root Dockerfile's runtime environment, user, ports, health check and command", () => {
  const runtime = instructions("Dockerfile", "runtime").filter((l) => KEPT.test(l));
  const local = instructions("images/service/Dockerfile").filter((l) => KEPT.test(l));
  // WORKDIR comes from the root Dockerfile's base stage.
  expect(local).toEqual(["WORKDIR /app", ...runtime]);
});

test("the local service image gets its dependencies from a production install, never a development one", () => {
  const source = readFileSync(join(ROOT, "scripts", "containers", "build-images.ts"), "utf8");
  expect(source).toContain('"install", "--frozen-lockfile", "--production"');
});
