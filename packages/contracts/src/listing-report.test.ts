import { describe, expect, test } from "bun:test";
import { listingReport, reportState, type ReportInput } from "./listing-report.ts";

const none = { warnings: [], qualityScore: 100 };
const ready = {
  url: "https://x/1.jpg",
  state: "ready" as const,
  width: 1600,
  height: 1200,
  failureReason: null,
  updatedAt: "2026-05-01T12:00:04.000Z",
};
const base: ReportInput = {
  mode: "live",
  status: "FOR_SALE",
  version: 2,
  storedAt: "2026-05-01T12:00:00.000Z",
  description: "d",
  descriptionOptimized: "d",
  descriptionOptimizedAt: "2026-05-01T12:00:03.000Z",
  indexState: "indexed",
  indexStateAt: "2026-05-01T12:00:03.000Z",
  publishedAt: "2026-05-01T12:00:03.000Z",
  visibleSince: "2026-05-01T12:00:00.000Z",
  photos: [ready],
  quality: none,
  listingUrl: "https://m/listings/1",
  sitemapUrl: "https://m/sitemap.xml",
};
const codes = (r: { reasons: { code: string }[] }) => r.reasons.map((x) => x.code);

describe("reportState: the first rule that applies decides", () => {
  test("NOT_VISIBLE names every reason: test mode and the status", () => {
    const r = reportState({ ...base, mode: "test", status: "DRAFT" });
    expect([r.state, codes(r)]).toEqual(["NOT_VISIBLE", ["TEST_MODE", "STATUS_NOT_VISIBLE"]]);
  });
  test("PROCESSING until published, and while a photo is pending", () => {
    expect(codes(reportState({ ...base, publishedAt: null }))).toEqual(["AWAITING_INDEX"]);
    const r = reportState({ ...base, photos: [ready, { ...ready, url: "https://x/2.jpg", state: "pending" }] });
    expect([r.state, codes(r)]).toEqual(["PROCESSING", ["PHOTOS_PENDING"]]);
  });
  test("a published listing whose next version waits for the index stays LIVE: buyers keep seeing it", () => {
    expect(reportState({ ...base, quality: none }).state).toBe("LIVE");
  });
  test("FAILED when every photo failed; LIVE_WITH_WARNINGS when only some did or anything else is missing", () => {
    const failed = { ...ready, state: "failed" as const, failureReason: "HTTP 404" };
    expect(reportState({ ...base, photos: [failed] }).state).toBe("FAILED");
    const warned = { warnings: [{ path: "photos[1]", code: "PHOTO_FAILED" as const, message: "m" }], qualityScore: 94 };
    expect(reportState({ ...base, photos: [ready, failed], quality: warned })).toEqual({
      state: "LIVE_WITH_WARNINGS",
      reasons: [{ code: "HAS_WARNINGS", message: "Buyers see it; 1 warning says what they miss" }],
    });
    expect(reportState({ ...base, photos: [] }).state).toBe("LIVE");
  });
});

test("the steps of a live listing, in order, each with its time", () => {
  const r = listingReport(base);
  expect(r.steps.map((s) => [s.step, s.outcome, s.at])).toEqual([
    ["stored", "done", "2026-05-01T12:00:00.000Z"],
    ["photo", "done", "2026-05-01T12:00:04.000Z"],
    ["description.rewritten", "done", "2026-05-01T12:00:03.000Z"],
    ["indexed", "done", "2026-05-01T12:00:03.000Z"],
    ["visible", "done", "2026-05-01T12:00:03.000Z"],
    ["sitemap", "done", "2026-05-01T12:00:00.000Z"],
  ]);
  expect(listingReport({ ...base, description: null, descriptionOptimized: null }).steps[2]).toMatchObject({
    outcome: "skipped",
    message: "No description to rewrite",
  });
});
