// GET /partner/v1/listings/{externalListingId}/report (issue 24, part 2) through the real API. The media service
// and the indexer do not run here: their steps are written as they write them (photo rows, index state and
// published_at, the stored rewrite), and the report must follow.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uniqueName } from "../../../test/support/env.ts";
import { sample, startApi, type ApiHarness, type Partner } from "./support/harness.ts";

let api: ApiHarness;
let partner: Partner;
let brokerId: string;

beforeAll(async () => {
  api = await startApi({ relay: false });
  partner = await api.createPartner({ test: true });
  brokerId = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
  expect((await partner.test!.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
});
afterAll(() => api.stop());

const photos = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ url: `https://images.example.com/r${i}.jpg`, sortKey: i }));
const longDescription =
  "A well-established taqueria two blocks from the Capitol, with trained staff, a loyal lunch crowd and a lease that runs until 2030.";
const report = async (id: string, p: { get(path: string): Promise<{ status: number; body: any }> } = partner) =>
  p.get(`/partner/v1/listings/${encodeURIComponent(id)}/report`);

/** What the media service and the indexer write when they finish. */
async function processed(listingId: number, widths: (number | "failed")[]) {
  const rows = await api.sql`SELECT url FROM listing_photos WHERE listing_id = ${listingId} ORDER BY sort_key`;
  for (const [i, w] of widths.entries()) {
    const url = rows[i]!.url;
    if (w === "failed")
      await api.sql`UPDATE listing_photos SET state = 'failed', failure_reason = 'HTTP 404 from the image host', updated_at = now() WHERE listing_id = ${listingId} AND url = ${url}`;
    else
      await api.sql`UPDATE listing_photos SET state = 'ready', width = ${w}, height = ${Math.round(w * 0.75)}, updated_at = now() WHERE listing_id = ${listingId} AND url = ${url}`;
  }
}
async function indexed(listingId: number) {
  await api.sql`UPDATE listings SET index_state = 'indexed', indexed_version = version, published_at = COALESCE(published_at, now()),
    description_optimized = description WHERE id = ${listingId}`;
}

describe("the processing report", () => {
  test("right after the PUT: stored, photos and index pending, in the sitemap; PROCESSING with its reasons", async () => {
    const id = uniqueName("listing");
    const put = await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId, { photos: photos(2) }));
    const res = await report(id);
    expect(res.status).toBe(200);
    const r = res.body.report;
    expect(r).toMatchObject({
      externalListingId: id,
      serviceListingId: put.body.serviceListingId,
      serviceListingUrl: put.body.serviceListingUrl,
      version: 1,
      state: "PROCESSING",
    });
    expect(r.reasons.map((x: { code: string }) => x.code)).toEqual(["AWAITING_INDEX", "PHOTOS_PENDING"]);
    expect(r.steps.map((s: { step: string; outcome: string }) => `${s.step}:${s.outcome}`)).toEqual([
      "stored:done",
      "photo:pending",
      "photo:pending",
      "description.rewritten:pending",
      "indexed:pending",
      "visible:pending",
      "sitemap:done",
    ]);
    expect(r.steps[0].at).toBe((await partner.get(`/partner/v1/listings/${id}`)).body.listing.updatedAt);
    expect(r.steps[1]).toEqual({
      step: "photo",
      outcome: "pending",
      at: null,
      message: "Waiting to be downloaded and processed",
      path: "photos[0]",
      url: photos(2)[0]!.url,
      width: null,
      height: null,
    });
    expect(r.steps[6]).toMatchObject({ url: "https://market.example.test/sitemap.xml" });
    expect(r.warnings.map((w: { code: string }) => w.code)).toEqual(["DESCRIPTION_TOO_SHORT", "PHOTOS_TOO_FEW"]);
    expect(r.qualityScore).toBe(72);
  });

  test("once processed and indexed: each step's time and outcome, a failed photo says what to do; LIVE_WITH_WARNINGS", async () => {
    const id = uniqueName("listing");
    const put = await partner.put(
      `/partner/v1/listings/${id}`,
      sample.listing(brokerId, { description: longDescription, photos: photos(5) }),
    );
    const listingId = put.body.serviceListingId;
    await processed(listingId, [1600, 1600, 1600, 1600, "failed"]);
    await indexed(listingId);
    const r = (await report(id)).body.report;
    expect(r.state).toBe("LIVE_WITH_WARNINGS");
    expect(r.reasons).toEqual([{ code: "HAS_WARNINGS", message: "Buyers see it; 1 warning says what they miss" }]);
    expect(r.steps[1]).toMatchObject({
      step: "photo",
      outcome: "done",
      message: "Downloaded and processed: 1600x1200 px",
      width: 1600,
      height: 1200,
    });
    expect(r.steps[5]).toMatchObject({ step: "photo", outcome: "failed", path: "photos[4]" });
    expect(r.steps[5].message).toContain("HTTP 404 from the image host");
    expect(r.steps[5].message).toContain("send another URL");
    const later = r.steps
      .slice(6)
      .map((s: { step: string; outcome: string; at: string | null }) => [s.step, s.outcome, typeof s.at]);
    expect(later).toEqual([
      ["description.rewritten", "done", "string"],
      ["indexed", "done", "string"],
      ["visible", "done", "string"],
      ["sitemap", "done", "string"],
    ]);
    expect(r.steps.find((s: { step: string }) => s.step === "visible").url).toBe(
      `https://market.example.test/listings/${listingId}`,
    );
    for (const s of r.steps) if (s.at) expect(Math.abs(Date.parse(s.at) - Date.now())).toBeLessThan(60_000);
    expect(r.warnings).toEqual([expect.objectContaining({ path: "photos[4]", code: "PHOTO_FAILED" })]);
  });

  test("a complete, processed, indexed listing is LIVE with no reasons", async () => {
    const id = uniqueName("listing");
    const put = await partner.put(
      `/partner/v1/listings/${id}`,
      sample.listing(brokerId, { description: longDescription, photos: photos(5) }),
    );
    await processed(put.body.serviceListingId, [1600, 1600, 1600, 1600, 1600]);
    await indexed(put.body.serviceListingId);
    expect((await report(id)).body.report).toMatchObject({
      state: "LIVE",
      reasons: [],
      warnings: [],
      qualityScore: 100,
    });
  });

  test("every photo failed: FAILED, with what to do in each photo step", async () => {
    const id = uniqueName("listing");
    const put = await partner.put(
      `/partner/v1/listings/${id}`,
      sample.listing(brokerId, { description: longDescription, photos: photos(2) }),
    );
    await processed(put.body.serviceListingId, ["failed", "failed"]);
    await indexed(put.body.serviceListingId);
    const r = (await report(id)).body.report;
    expect(r.state).toBe("FAILED");
    expect(r.reasons.map((x: { code: string }) => x.code)).toEqual(["ALL_PHOTOS_FAILED"]);
  });

  test("a status buyers do not see: NOT_VISIBLE, saying which status; search, page and sitemap skipped", async () => {
    const id = uniqueName("listing");
    await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId, { status: "SOLD" }));
    const r = (await report(id)).body.report;
    expect(r.state).toBe("NOT_VISIBLE");
    expect(r.reasons).toEqual([
      { code: "STATUS_NOT_VISIBLE", message: expect.stringContaining("Status SOLD is not shown to buyers") },
    ]);
    expect(r.steps.slice(-3).map((s: { step: string; outcome: string }) => `${s.step}:${s.outcome}`)).toEqual([
      "indexed:skipped",
      "visible:skipped",
      "sitemap:skipped",
    ]);
  });

  test("a test key's listing: NOT_VISIBLE because of test mode; each key reads only its own mode's reports", async () => {
    const id = uniqueName("listing");
    expect((await partner.test!.put(`/partner/v1/listings/${id}`, sample.listing(brokerId))).status).toBe(201);
    const r = (await report(id, partner.test!)).body.report;
    expect(r.state).toBe("NOT_VISIBLE");
    expect(r.reasons.map((x: { code: string }) => x.code)).toEqual(["TEST_MODE"]);
    expect(r.serviceListingUrl).toContain("/preview/");
    expect(await report(id)).toMatchObject({ status: 404, body: { status: "error", error: "Listing not found" } });
  });

  test("unknown IDs and other partners' listings are 404; without a key 401", async () => {
    expect(await report(uniqueName("nope"))).toMatchObject({
      status: 404,
      body: { status: "error", error: "Listing not found" },
    });
    const id = uniqueName("listing");
    await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId));
    const other = await api.createPartner();
    expect(await report(id, other)).toMatchObject({
      status: 404,
      body: { status: "error", error: "Listing not found" },
    });
    const anonymous = await fetch(`${api.baseUrl}/partner/v1/listings/${id}/report`);
    expect(anonymous.status).toBe(401);
  });

  test("reports and statistics are read-only: other methods get 405 in the error shape", async () => {
    const id = uniqueName("listing");
    await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId));
    for (const path of [`/partner/v1/listings/${id}/report`, `/partner/v1/listings/${id}/stats`]) {
      for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
        const res = await fetch(`${api.baseUrl}${path}`, {
          method,
          headers: { authorization: `Bearer ${partner.apiKey}`, "content-type": "application/json" },
          body: method === "DELETE" ? undefined : "{}",
        });
        expect([path, method, res.status, ((await res.json()) as { status: string }).status]).toEqual([
          path,
          method,
          405,
          "error",
        ]);
      }
    }
  });
});
