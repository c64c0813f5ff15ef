// The previous release the upgrade tests run against is recorded in the repository (releases/previous.json:
// version and commit of main), so every clone has it, tags or not (docs/upgrades.md, "Releases").
import { afterAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureReleaseCommit, PREVIOUS_RELEASE_FILE, previousRelease, ROOT } from "./support/release.ts";

const scratch = mkdtempSync(join(tmpdir(), "pss-previous-release-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const git = (args: string[], cwd = ROOT) => {
  const r = spawnSync("git", args, { cwd, encoding: "utf8" });
  return { code: r.status, out: (r.stdout ?? "").trim(), err: (r.stderr ?? "").trim() };
};

test("the recorded release is the newest one CHANGELOG.md dates, and a commit of this checkout's history", () => {
  const recorded = previousRelease();
  const changelog = readFileSync(join(ROOT, "CHANGELOG.md"), "utf8");
  const releases = [...changelog.matchAll(/^## (v\d+\.\d+\.\d+)\b/gm)].map((m) => m[1]);
  // The release process dates the release and records its commit in one change: they never disagree.
  expect(releases[0]).toBe(recorded.version);
  ensureReleaseCommit(recorded);
  expect(git(["cat-file", "-t", recorded.commit]).out).toBe("commit");
  // Where the history is there to tell (not a shallow clone), the release is one of HEAD's ancestors.
  if (git(["rev-parse", "--is-shallow-repository"]).out === "false")
    expect(git(["merge-base", "--is-ancestor", recorded.commit, "HEAD"]).code).toBe(0);
});

test("a malformed record is refused, naming the file and what it must hold", () => {
  const root = join(scratch, "record");
  mkdirSync(join(root, "releases"), { recursive: true });
  for (const [record, problem] of [
    [{ version: "1.0", commit: "a".repeat(40) }, '"version" must be a release version'],
    [{ version: "v1.0.0", commit: "ddb8b4f" }, '"commit" must be the release\'s full 40-character commit hash'],
    [{ version: "v1.0.0" }, '"commit" must be'],
  ] as const) {
    writeFileSync(join(root, PREVIOUS_RELEASE_FILE), JSON.stringify(record));
    expect(() => previousRelease(root)).toThrow(`${PREVIOUS_RELEASE_FILE}: ${problem}`);
  }
});

test("a shallow clone fetches the release's commit from origin; a commit origin lacks fails loudly, saying what to do", () => {
  const recorded = previousRelease();
  ensureReleaseCommit(recorded);
  const clone = join(scratch, "shallow");
  const cloned = git(["clone", "--quiet", "--depth", "1", "--no-checkout", `file://${ROOT}`, clone], scratch);
  expect(cloned.err).toBe("");
  expect(git(["rev-parse", "--is-shallow-repository"], clone).out).toBe("true");
  expect(git(["cat-file", "-e", `${recorded.commit}^{commit}`], clone).code).not.toBe(0);
  ensureReleaseCommit(recorded, clone);
  // What the upgrade test materialises the release from.
  const archive = spawnSync("sh", ["-c", `git archive --format=tar ${recorded.commit} | tar -t`], {
    cwd: clone,
    encoding: "utf8",
  });
  expect(archive.status).toBe(0);
  expect(archive.stdout.split("\n")).toContain("docker-compose.yml");

  const unknown = { version: "v9.9.9", commit: "0123456789abcdef0123456789abcdef01234567" };
  expect(() => ensureReleaseCommit(unknown, clone)).toThrow(
    `this clone lacks v9.9.9's commit ${unknown.commit} (${PREVIOUS_RELEASE_FILE}), and fetching it from origin failed`,
  );
}, 60_000);
