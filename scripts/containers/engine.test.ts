import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeComposeEnv, readComposeEnv } from "./compose-env.ts";
import { cannotStart, type MachineFacts } from "./engine.ts";

const debianRoot: MachineFacts = { platform: "linux", uid: 0, cgroups: true, dockerd: false, aptGet: true };

test("an engine is started only on Linux, as root, with cgroups, and docker.io installed or installable; otherwise one line says why", () => {
  expect(cannotStart(debianRoot)).toBeNull();
  expect(cannotStart({ ...debianRoot, dockerd: true, aptGet: false })).toBeNull();
  const reasons = [
    cannotStart({ ...debianRoot, uid: 1000 }),
    cannotStart({ ...debianRoot, cgroups: false }),
    cannotStart({ ...debianRoot, aptGet: false }),
    cannotStart({ ...debianRoot, platform: "darwin" }),
  ];
  expect(reasons.map((r) => r !== null && !r.includes("\n"))).toEqual([true, true, true, true]);
  expect(reasons[0]).toContain("needs root");
  expect(reasons[1]).toContain("no cgroups");
  expect(reasons[2]).toContain("apt-get");
  expect(reasons[3]).toContain("darwin");
});

test(".env: the image variables are written and read back, an operator's own lines are kept, a rewrite replaces the old values", () => {
  const file = join(mkdtempSync(join(tmpdir(), "compose-env-")), ".env");
  writeFileSync(file, "# mine\nLOG_LEVEL=debug\nPSS_IMAGE=old:tag\n");
  writeComposeEnv({ PSS_IMAGE: "pss-local/service:abc", PSS_REDIS_IMAGE: "pss-local/redis:def" }, file);
  writeComposeEnv({ PSS_IMAGE: "pss-local/service:new", PSS_REDIS_IMAGE: "pss-local/redis:def" }, file);
  const text = readFileSync(file, "utf8");
  expect(text).toContain("# mine\nLOG_LEVEL=debug\n");
  expect(text.match(/PSS_IMAGE=/g)).toHaveLength(1);
  expect(readComposeEnv(file)).toEqual({ PSS_IMAGE: "pss-local/service:new", PSS_REDIS_IMAGE: "pss-local/redis:def" });
});
