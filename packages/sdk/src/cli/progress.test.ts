import { expect, test } from "bun:test";
import { screenLines } from "../../test/support/doc-examples.ts";
import { createProgress } from "./progress.ts";
import type { ProgressEvent } from "../sync/run-sync.ts";

const event = (phase: ProgressEvent["phase"], done: number): ProgressEvent => ({
  phase,
  done,
  total: 2,
  counts: { created: 0, updated: 0, unchanged: 0, skipped: done, failed: 0 },
  requests: 1,
});

test("a message during the run stands on its own line, and the bar is drawn again below it", () => {
  let written = "";
  let clock = 0;
  const progress = createProgress("bar", { write: (t: string) => (written += t), columns: 200 }, () => clock);
  progress.update(event("listings", 1));
  progress.message("pss-sync: --archive-missing would archive 1 listing(s)");
  clock += 10; // sooner than the redraw interval: the bar comes back anyway
  progress.update(event("listings", 2));
  const lines = screenLines(written);
  expect(lines[0]).toBe("pss-sync: --archive-missing would archive 1 listing(s)");
  expect(lines[1]).toStartWith("listings   [########################] 2/2 100%");
  expect(lines).toHaveLength(2);
});

test("interrupt clears the bar before a question, so the question starts the line", () => {
  let written = "";
  const progress = createProgress("bar", { write: (t: string) => (written += t), columns: 200 }, () => 0);
  progress.update(event("listings", 1));
  progress.interrupt();
  written += "Archive 1 listing(s)? ";
  expect(screenLines(written)).toEqual(["Archive 1 listing(s)?"]);
});

test("the summary ends with how many listings and brokers carry each warning, most frequent first", () => {
  let written = "";
  const progress = createProgress("bar", { write: (t: string) => (written += t), columns: 200 }, () => 0);
  const summary = {
    created: 3,
    updated: 0,
    unchanged: 0,
    skipped: 0,
    failed: 0,
    total: 3,
    archived: 0,
    archiveSkipped: null,
    durationMs: 100,
    requests: 4,
    dryRun: false,
    interrupted: false,
    warnings: { listings: { PHOTOS_TOO_FEW: 2, ASKING_PRICE_MISSING: 1 }, brokers: { AVATAR_MISSING: 1 } },
  };
  progress.summary(summary, []);
  expect(screenLines(written).slice(1)).toEqual([
    "pss-sync: quality warnings (nothing was refused for them; --report <file> lists each record's):",
    "  PHOTOS_TOO_FEW: 2 listings",
    "  ASKING_PRICE_MISSING: 1 listing",
    "  AVATAR_MISSING: 1 broker",
  ]);
  written = "";
  progress.summary({ ...summary, warnings: { listings: {}, brokers: {} } }, []);
  expect(screenLines(written)).toHaveLength(1);
});
