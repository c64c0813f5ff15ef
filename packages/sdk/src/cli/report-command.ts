// `pss-sync report`: the partner's listings that buyers do not see as they should, with why. Reads every listing
// (GET /partner/v1/listings, paged) and each one's processing report (GET …/{id}/report), `concurrency` at a
// time under the same pacer as a sync, and prints those whose state is not LIVE (with --warnings, not LIVE
// without warnings either).
import type { PartnerClient } from "../client/partner-client.ts";
import type { ListingReport } from "../types.ts";

export interface ReportCommandOptions {
  client: PartnerClient;
  concurrency: number;
  /** Also list LIVE_WITH_WARNINGS listings, with their warning codes. */
  includeWarnings: boolean;
  json: boolean;
  out: { write(text: string): unknown };
  signal?: AbortSignal;
}

const LIVE = new Set(["LIVE", "LIVE_WITH_WARNINGS"]);

/** Returns how many listings were listed as not live. */
export async function runReportCommand(opts: ReportCommandOptions): Promise<{ total: number; listed: number }> {
  const ids: string[] = [];
  for await (const l of opts.client.listListings({ signal: opts.signal })) ids.push(l.externalListingId);
  const reports: ListingReport[] = new Array(ids.length);
  let next = 0;
  const worker = async () => {
    while (next < ids.length && !opts.signal?.aborted) {
      const i = next++;
      reports[i] = await opts.client.getListingReport(ids[i]!, { signal: opts.signal });
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, opts.concurrency), ids.length) }, worker));
  const shown = reports.filter(
    (r) => r && (!LIVE.has(r.state) || (opts.includeWarnings && r.state === "LIVE_WITH_WARNINGS")),
  );
  shown.sort((a, b) => a.state.localeCompare(b.state) || a.externalListingId.localeCompare(b.externalListingId));

  if (opts.json) {
    for (const r of shown) {
      const line = {
        externalListingId: r.externalListingId,
        serviceListingId: r.serviceListingId,
        url: r.serviceListingUrl,
        state: r.state,
        reasons: r.reasons,
        warnings: r.warnings.map((w) => w.code),
        qualityScore: r.qualityScore,
      };
      opts.out.write(`${JSON.stringify(line)}\n`);
    }
    return { total: ids.length, listed: shown.length };
  }
  const notLive = shown.filter((r) => !LIVE.has(r.state)).length;
  opts.out.write(
    `pss-sync report: ${notLive} of ${ids.length} listing${ids.length === 1 ? " is" : "s are"} not live${opts.includeWarnings ? `; ${shown.length - notLive} live with warnings` : ""}\n`,
  );
  const width = Math.max(0, ...shown.map((r) => r.externalListingId.length));
  for (const r of shown) {
    const why =
      r.state === "LIVE_WITH_WARNINGS"
        ? `warnings: ${[...new Set(r.warnings.map((w) => w.code))].join(", ")}`
        : r.reasons.map((x) => x.message).join("; ");
    opts.out.write(`  ${r.externalListingId.padEnd(width)}  ${r.state.padEnd(18)}  ${why}\n`);
  }
  return { total: ids.length, listed: shown.length };
}
