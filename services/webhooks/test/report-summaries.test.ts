// The report tracker keeps each listing's summary (listing_report_summaries, issue 42) for the partner portal's
// overview and listings list: status, state, score, warning codes, title, broker and last write, written with the
// recomputation and only when something in it changed; no fact is announced for a change that leaves the state.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { silentLogger } from "@pss/service-kit";
import { sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { uniqueName } from "../../../test/support/env.ts";
import { createReportTracker, type ReportTracker } from "../src/reports/report-tracker.ts";

let api: ApiHarness;
let partner: Partner;
let tracker: ReportTracker;

beforeAll(async () => {
  api = await startApi({ relay: false });
  partner = await api.createPartner();
  tracker = createReportTracker({ sql: api.sql, logger: silentLogger, onlyPartners: new Set([partner.partnerId]) });
});
afterAll(() => api?.stop());

const summaryOf = async (id: number) =>
  (await api.sql`SELECT *, computed_at::text AS computed FROM listing_report_summaries WHERE listing_id = ${id}`)[0];

describe("listing report summaries", () => {
  test("hold what the portal lists, follow every recomputation that changes them, and are left alone otherwise", async () => {
    const brokerId = uniqueName("broker");
    expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
    const id = uniqueName("listing");
    const body = sample.listing(brokerId, { financials: { revenue: 900000 } });
    const put = await partner.put(`/partner/v1/listings/${id}`, body);
    expect(put.status).toBe(201);
    const serviceId = put.body.serviceListingId as number;
    expect(await summaryOf(serviceId)).toBeUndefined();

    await tracker.recompute(String(serviceId));
    const first = await summaryOf(serviceId);
    expect(first).toMatchObject({
      partner_id: partner.partnerId,
      mode: "live",
      external_id: id,
      title: "Profitable taqueria downtown",
      status: "FOR_SALE",
      state: "PROCESSING",
      score: put.body.qualityScore,
      warnings: [...new Set(put.body.warnings.map((w: { code: string }) => w.code))].sort(),
    });
    expect(first!.warnings).toContain("ASKING_PRICE_MISSING");
    const version = (await api.sql`SELECT report_version FROM listings WHERE id = ${serviceId}`)[0]!.report_version;

    // Unchanged: nothing written.
    await tracker.recompute(String(serviceId));
    expect((await summaryOf(serviceId))!.computed).toBe(first!.computed);

    // The fix: the warning goes, the score rises, the state (still PROCESSING) is not announced again.
    const fixed = await partner.put(`/partner/v1/listings/${id}`, {
      title: "Taqueria, downtown Austin",
      financials: { askingPrice: 450000 },
    });
    expect(fixed.status).toBe(200);
    await tracker.recompute(String(serviceId));
    const after = await summaryOf(serviceId);
    expect(after!.warnings).not.toContain("ASKING_PRICE_MISSING");
    expect(after!.score).toBe(fixed.body.qualityScore);
    expect(after!.title).toBe("Taqueria, downtown Austin");
    expect(new Date(after!.updated_at).getTime()).toBeGreaterThan(new Date(first!.updated_at).getTime());
    const versionAfter = (await api.sql`SELECT report_version FROM listings WHERE id = ${serviceId}`)[0]!
      .report_version;
    expect(versionAfter).toBe(version);

    // A status buyers do not see changes the state: summary and announcement together.
    await partner.put(`/partner/v1/listings/${id}`, { status: "SOLD" });
    await tracker.recompute(String(serviceId));
    expect(await summaryOf(serviceId)).toMatchObject({ status: "SOLD", state: "NOT_VISIBLE" });
  });
});
