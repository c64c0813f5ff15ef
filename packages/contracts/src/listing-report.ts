// The processing report's rules (issue 24, part 2): pure, so the API's report route and the webhooks service's
// report tracker (which announces listing.report.changed) decide the overall state the same way.
import { isBuyerVisible } from "./http/buyer.ts";
import type { Quality } from "./http/quality.ts";
import type { ReportReason, ReportState, ReportStep } from "./http/report.ts";

export interface ReportPhotoInput {
  url: string;
  state: "pending" | "ready" | "failed";
  width: number | null;
  height: number | null;
  failureReason: string | null;
  /** When the photo last changed state (its processing finished). */
  updatedAt: string | null;
}

/** What the report reads of a stored listing. Times are ISO 8601 strings or null. */
export interface ReportInput {
  mode: "live" | "test";
  status: string;
  version: number;
  storedAt: string;
  description: string | null;
  descriptionOptimized: string | null;
  descriptionOptimizedAt: string | null;
  indexState: "pending" | "indexed" | "removed";
  indexStateAt: string | null;
  /** Set by the indexer once the listing is indexed and so visible to buyers; null while it is not. */
  publishedAt: string | null;
  /** When the listing entered its current (visible) status: from then on it is in sitemap.xml. */
  visibleSince: string | null;
  photos: readonly ReportPhotoInput[];
  quality: Quality;
  listingUrl: string;
  sitemapUrl: string;
}

/** The overall state and why it is not LIVE: the part the webhook announces when it changes. */
export function reportState(input: Pick<ReportInput, "mode" | "status" | "publishedAt" | "photos" | "quality">): {
  state: ReportState;
  reasons: ReportReason[];
} {
  const reasons: ReportReason[] = [];
  if (input.mode === "test")
    reasons.push({
      code: "TEST_MODE",
      message: "A test record (written with a pss_test_ key): never shown to buyers; see it through its preview link",
    });
  if (!isBuyerVisible(input.status))
    reasons.push({
      code: "STATUS_NOT_VISIBLE",
      message: `Status ${input.status} is not shown to buyers (visible: FOR_SALE, REVIEWING_OFFERS, PENDING_CONTRACT, UNDER_CONTRACT)`,
    });
  if (reasons.length) return { state: "NOT_VISIBLE", reasons };

  const pending = input.photos.filter((p) => p.state === "pending").length;
  if (input.publishedAt === null)
    reasons.push({
      code: "AWAITING_INDEX",
      message: "Stored; waiting for the search index, after which buyers see it",
    });
  if (pending > 0)
    reasons.push({
      code: "PHOTOS_PENDING",
      message: `${pending} photo${pending === 1 ? "" : "s"} still being downloaded and processed`,
    });
  if (reasons.length) return { state: "PROCESSING", reasons };

  if (input.photos.length > 0 && input.photos.every((p) => p.state === "failed"))
    return {
      state: "FAILED",
      reasons: [
        {
          code: "ALL_PHOTOS_FAILED",
          message:
            "Every photo failed: buyers see the listing without any photo. Each photo step says why and what to do",
        },
      ],
    };
  const n = input.quality.warnings.length;
  if (n > 0)
    return {
      state: "LIVE_WITH_WARNINGS",
      reasons: [
        {
          code: "HAS_WARNINGS",
          message: `Buyers see it; ${n === 1 ? "1 warning says" : `${n} warnings say`} what they miss`,
        },
      ],
    };
  return { state: "LIVE", reasons: [] };
}

const PHOTO_FIX =
  "Fix the image at its URL (it must answer 200 with a JPEG, PNG or WebP image), or send another URL; a PUT with a new URL processes it again";

/** Every step from the write to the buyer's page, in order, and the overall state. */
export function listingReport(input: ReportInput): {
  state: ReportState;
  reasons: ReportReason[];
  steps: ReportStep[];
} {
  const steps: ReportStep[] = [
    { step: "stored", outcome: "done", at: input.storedAt, message: `Version ${input.version} stored` },
  ];

  input.photos.forEach((p, i) => {
    const base = { step: "photo" as const, path: `photos[${i}]`, url: p.url, width: p.width, height: p.height };
    if (p.state === "ready")
      steps.push({
        ...base,
        outcome: "done",
        at: p.updatedAt,
        message: `Downloaded and processed: ${p.width}x${p.height} px`,
      });
    else if (p.state === "failed")
      steps.push({
        ...base,
        outcome: "failed",
        at: p.updatedAt,
        message: `${p.failureReason ?? "Processing failed"}. ${PHOTO_FIX}`,
      });
    else steps.push({ ...base, outcome: "pending", at: null, message: "Waiting to be downloaded and processed" });
  });

  if (input.description === null)
    steps.push({ step: "description.rewritten", outcome: "skipped", at: null, message: "No description to rewrite" });
  else if (input.descriptionOptimized !== null)
    steps.push({
      step: "description.rewritten",
      outcome: "done",
      at: input.descriptionOptimizedAt,
      message: "Rewritten for buyers (contact details removed); the read-back shows it as descriptionOptimized",
    });
  else
    steps.push({
      step: "description.rewritten",
      outcome: "pending",
      at: null,
      message: "Rewritten when the listing is indexed",
    });

  const visibleStatus = isBuyerVisible(input.status);
  const test = input.mode === "test";
  const notShown = test ? "Test records are never shown to buyers" : `Status ${input.status} is not shown to buyers`;
  if (!visibleStatus || test) {
    const searchMessage = test
      ? "Test records are never written to the search index"
      : `Not in search: status ${input.status} is not shown to buyers`;
    steps.push({
      step: "indexed",
      outcome: "skipped",
      at: input.indexState === "pending" ? null : input.indexStateAt,
      message: searchMessage,
    });
    steps.push({ step: "visible", outcome: "skipped", at: null, message: notShown, url: input.listingUrl });
    steps.push({ step: "sitemap", outcome: "skipped", at: null, message: notShown, url: input.sitemapUrl });
  } else {
    if (input.indexState === "indexed")
      steps.push({ step: "indexed", outcome: "done", at: input.indexStateAt, message: "In the buyers' search index" });
    else
      steps.push({
        step: "indexed",
        outcome: "pending",
        at: null,
        message: "Waiting for the search index to apply this version",
      });
    if (input.publishedAt !== null)
      steps.push({
        step: "visible",
        outcome: "done",
        at: input.publishedAt,
        message: "Buyers see it at its URL",
        url: input.listingUrl,
      });
    else
      steps.push({
        step: "visible",
        outcome: "pending",
        at: null,
        message: "Buyers see it once it is indexed",
        url: input.listingUrl,
      });
    steps.push({
      step: "sitemap",
      outcome: "done",
      at: input.visibleSince,
      message: "Listed in sitemap.xml",
      url: input.sitemapUrl,
    });
  }
  return { ...reportState(input), steps };
}
