// A listing's page: the whole story from the PUT to the buyer's page, then inquiries (docs/portal.md, "A listing").
import { html, type Raw } from "@pss/html";
import type { ListingReport } from "@pss/contracts";
import type { PortalScope } from "../reads/scope.ts";
import { dailyChart, type Series } from "./charts.ts";
import { formatNumber, formatTime } from "./format.ts";
import { historyTimeline, type HistoryEntryView } from "./history.ts";
import { BASE } from "./layout.ts";
import { mediaBadge, stateBadge, statusLabel, warningList } from "./parts.ts";

export interface ListingPageData {
  title: string;
  externalId: string;
  status: string;
  brokerExternalId: string;
  businessType: string;
  report: ListingReport;
  /** Photos in the partner's order, with a thumbnail URL once processed. */
  photos: {
    url: string;
    state: string;
    width: number | null;
    height: number | null;
    failureReason: string | null;
    thumbnail: string | null;
  }[];
  /** The buyer's page (live) or a preview link of a test record. */
  link: string;
  days: string[];
  views: number[];
  impressions: number[];
  /** null without lead access: not read, not shown. */
  inquiries: number[] | null;
  history: HistoryEntryView[];
  olderHistory: string | null;
  keyPrefixes: Map<string, string>;
}

const OUTCOME: Record<string, { label: string; tone: string }> = {
  done: { label: "Done", tone: "good" },
  pending: { label: "Pending", tone: "info" },
  failed: { label: "Failed", tone: "bad" },
  skipped: { label: "Skipped", tone: "info" },
};

const STEP_NAMES: Record<string, string> = {
  stored: "Accepted and stored",
  photo: "Photo",
  "description.rewritten": "Description rewritten for buyers",
  indexed: "Indexed for search",
  visible: "Visible to buyers",
  sitemap: "In the sitemap",
};

function steps(report: ListingReport): Raw {
  return html`<ol class="steps">${report.steps.map((s) => {
    const o = OUTCOME[s.outcome] ?? { label: s.outcome, tone: "info" };
    const path = (s as { path?: string }).path;
    return html`<li><p><span class="badge ${o.tone}">${o.label}</span> <strong>${STEP_NAMES[s.step] ?? s.step}</strong>${path ? html` <code>${path}</code>` : ""} <span class="muted">${s.at ? formatTime(s.at) : ""}</span></p><p>${s.message}</p></li>`;
  })}</ol>`;
}

export function listingBody(scope: PortalScope, d: ListingPageData): Raw {
  const series: Series[] = [
    { name: "Views", color: "#0b5cad", values: d.views },
    { name: "Search impressions", color: "#6b7785", values: d.impressions },
  ];
  if (d.inquiries) series.push({ name: "Inquiries", color: "#1b6e3a", values: d.inquiries });
  return html`<p><a href="${BASE}/${scope.mode}/listings">← Listings</a></p>
<h1>${d.title}</h1>
<p>${stateBadge(d.report.state)} <span class="muted">Status</span> ${statusLabel(d.status)} · <span class="muted">External ID</span> <code>${d.externalId}</code> · <span class="muted">Version</span> ${d.report.version} · <span class="muted">Broker</span> <a href="${BASE}/${scope.mode}/brokers/${encodeURIComponent(d.brokerExternalId)}">${d.brokerExternalId}</a></p>
<p>${scope.mode === "test" ? html`<a href="${d.link}">Preview of this test record</a> <span class="muted">(a signed link that works for a limited time; test records are never shown to buyers)</span>` : html`<a href="${d.link}">The buyer's page</a> <span class="muted">${d.link}</span>`}</p>
${d.report.reasons.length ? html`<ul class="notice">${d.report.reasons.map((r) => html`<li>${r.message}</li>`)}</ul>` : ""}
<div class="two"><section aria-labelledby="processing"><h2 id="processing">Processing, step by step</h2>${steps(d.report)}</section>
<section aria-labelledby="quality"><h2 id="quality">Quality</h2>${warningList(d.report.warnings, d.report.qualityScore)}</section></div>
<section aria-labelledby="photos"><h2 id="photos">Photos</h2>${
    d.photos.length === 0
      ? html`<p class="muted">No photos.</p>`
      : html`<ul class="photos">${d.photos.map(
          (p, i) =>
            html`<li>${p.thumbnail ? html`<img src="${p.thumbnail}" alt="Photo ${i + 1} of ${d.photos.length}" loading="lazy">` : html`<p class="no-photo">${p.state === "failed" ? "Not usable" : "Not processed yet"}</p>`}<p>${mediaBadge(p.state)}${p.width ? html` ${p.width}×${p.height} px` : ""}</p>${p.failureReason ? html`<p class="bad">${p.failureReason}</p>` : ""}<p class="muted"><a href="${p.url}">${p.url}</a></p></li>`,
        )}</ul>`
  }</section>
<section aria-labelledby="performance"><h2 id="performance">Views${d.inquiries ? " and inquiries" : ""}, last 30 days</h2>${dailyChart(
    {
      title: d.inquiries ? "Views, search impressions and inquiries per day" : "Views and search impressions per day",
      caption: `Buyers who opened the listing's page and searches that showed it${d.inquiries ? ", and inquiries," : ""} each UTC day. Totals: ${formatNumber(d.views.reduce((a, b) => a + b, 0))} views.`,
      unit: "",
      days: d.days,
      series,
    },
  )}</section>
<section aria-labelledby="history"><h2 id="history">Change history</h2>${historyTimeline(d.history, d.keyPrefixes, d.olderHistory)}</section>`;
}
