// Overview: where the partner's feed stands, at a glance (docs/portal.md, "Overview").
import { html } from "@pss/html";
import type { Overview } from "../reads/overview-reads.ts";
import type { PortalScope } from "../reads/scope.ts";
import { barChart, dailyChart } from "./charts.ts";
import { formatNumber, formatPercent, formatTime } from "./format.ts";
import { BASE } from "./layout.ts";
import { fixOf, LISTING_STATUSES, queryOf, REPORT_STATES, stateLabel, statusLabel } from "./parts.ts";

const STATE_COLORS: Record<string, string> = {
  LIVE: "#1b6e3a",
  LIVE_WITH_WARNINGS: "#8a5300",
  PROCESSING: "#34516b",
  NOT_VISIBLE: "#6b7785",
  FAILED: "#b3261e",
};

export function overviewBody(scope: PortalScope, o: Overview, computedAt: number) {
  const listings = `${BASE}/${scope.mode}/listings`;
  const requests7 = o.requests.total.reduce((a, b) => a + b, 0);
  const errors7 =
    o.requests.clientErrors.reduce((a, b) => a + b, 0) + o.requests.serverErrors.reduce((a, b) => a + b, 0);
  const pending = o.listings - o.summarized;
  return html`<h1>Overview</h1>
<p class="muted">Figures as of ${formatTime(new Date(computedAt))}.</p>
<div class="grid">
<div class="card"><h2 class="card-title">Listings</h2><p class="figure">${formatNumber(o.listings)}</p><p><a href="${listings}">All listings</a></p></div>
<div class="card"><h2 class="card-title">Live for buyers</h2><p class="figure">${formatNumber((o.byState.get("LIVE") ?? 0) + (o.byState.get("LIVE_WITH_WARNINGS") ?? 0))}</p><p><a href="${listings}${queryOf({ state: "LIVE_WITH_WARNINGS" })}">${formatNumber(o.byState.get("LIVE_WITH_WARNINGS") ?? 0)} with warnings</a></p></div>
<div class="card"><h2 class="card-title">Failing webhook endpoints</h2><p class="figure ${o.failingEndpoints.length ? "bad" : "good"}">${formatNumber(o.failingEndpoints.length)}</p><p><a href="${BASE}/${scope.mode}/webhooks">Webhooks</a></p></div>
<div class="card"><h2 class="card-title">API errors, last 7 days</h2><p class="figure ${errors7 ? "warn" : "good"}">${formatPercent(errors7, requests7)}</p><p>${formatNumber(errors7)} of ${formatNumber(requests7)} requests · <a href="${BASE}/${scope.mode}/requests${queryOf({ class: "4xx" })}">Errors</a></p></div>
</div>
${pending > 0 ? html`<p class="notice">${formatNumber(pending)} listing${pending === 1 ? " was" : "s were"} written moments ago and ${pending === 1 ? "is" : "are"} not counted below yet.</p>` : ""}
<div class="two"><div>
<h2>By processing state</h2>
${barChart({
  title: "Listings by processing state",
  caption: "Where each listing is between the write and the buyer's page.",
  unit: "listings",
  bars: REPORT_STATES.map((s) => ({ label: stateLabel(s), value: o.byState.get(s) ?? 0, color: STATE_COLORS[s] })),
})}
<h2>By status</h2>
${barChart({
  title: "Listings by status",
  caption: "The status the partner sent.",
  unit: "listings",
  bars: LISTING_STATUSES.map((s) => ({ label: statusLabel(s), value: o.byStatus.get(s) ?? 0 })),
})}
</div><div>
<h2>Quality score</h2>
${barChart({
  title: "Listings by quality score",
  caption: "100 means buyers miss nothing; each warning costs points.",
  unit: "listings",
  narrow: true,
  bars: o.scoreBands.map((n, i) => ({ label: i === 9 ? "90–100" : `${i * 10}–${i * 10 + 9}`, value: n })).reverse(),
})}
</div></div>
<h2>Open warnings</h2>
${
  o.warnings.length === 0
    ? html`<p class="notice good">No listing has a warning.</p>`
    : html`<div class="table-wrap"><table><caption class="muted">Listings with each warning, and how to fix it</caption><thead><tr><th scope="col">Warning</th><th scope="col" class="num">Listings</th><th scope="col">How to fix</th></tr></thead><tbody>${o.warnings.map(
        (w) =>
          html`<tr><th scope="row"><a href="${listings}${queryOf({ warning: w.code })}">${w.code}</a></th><td class="num">${formatNumber(w.listings)}</td><td>${fixOf(w.code)}</td></tr>`,
      )}</tbody></table></div>`
}
<h2>Deliveries failing now</h2>
${
  o.failingEndpoints.length === 0
    ? html`<p class="notice good">Every webhook endpoint answers.</p>`
    : html`<div class="table-wrap"><table><thead><tr><th scope="col">Endpoint</th><th scope="col">Failing since</th><th scope="col" class="num">Waiting for a retry</th><th scope="col" class="num">Failed, last 24 h</th></tr></thead><tbody>${o.failingEndpoints.map(
        (e) =>
          html`<tr><th scope="row"><a href="${BASE}/${scope.mode}/webhooks${queryOf({ endpoint: e.endpointId })}">${e.endpointId}</a><br><span class="muted">${e.url}</span>${e.enabled ? "" : html`<br><span class="badge bad">Disabled</span>`}</th><td>${formatTime(e.failingSince)}</td><td class="num">${formatNumber(e.retrying)}</td><td class="num">${formatNumber(e.failedToday)}</td></tr>`,
      )}</tbody></table></div>`
}
<h2>API requests, last 7 days</h2>
${dailyChart({
  title: "API requests and errors per day",
  caption: "Requests the partner's keys made each UTC day, and how many were refused (4xx) or failed (5xx).",
  unit: "requests",
  days: o.requests.days,
  series: [
    { name: "Requests", color: "#0b5cad", values: o.requests.total },
    { name: "4xx", color: "#8a5300", values: o.requests.clientErrors },
    { name: "5xx", color: "#b3261e", values: o.requests.serverErrors },
  ],
})}
${
  o.inquiries
    ? html`<h2>Inquiries, last 30 days</h2>${dailyChart({
        title: "Inquiries per day",
        caption: "Buyers' inquiries to the partner's listings each UTC day.",
        unit: "inquiries",
        days: o.inquiries.days,
        series: [{ name: "Inquiries", color: "#1b6e3a", values: o.inquiries.counts }],
      })}`
    : ""
}`;
}
