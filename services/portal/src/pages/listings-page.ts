// Listings: every listing with its state, score and warnings; filters and search (docs/portal.md, "Listings").
import { html } from "@pss/html";
import { LISTING_WARNING_CODES } from "@pss/contracts";
import type { ListingFilter, ListingRow } from "../reads/listing-reads.ts";
import type { PortalScope } from "../reads/scope.ts";
import { formatNumber, formatTime } from "./format.ts";
import { BASE } from "./layout.ts";
import {
  LISTING_STATUSES,
  pager,
  queryOf,
  REPORT_STATES,
  select,
  stateBadge,
  stateLabel,
  statusLabel,
  textField,
} from "./parts.ts";

export const listingPath = (scope: PortalScope, externalId: string) =>
  `${BASE}/${scope.mode}/listings/${encodeURIComponent(externalId)}`;

export function listingsBody(
  scope: PortalScope,
  filter: ListingFilter,
  page: { rows: ListingRow[]; next: string | null },
  pending: number,
) {
  const base = `${BASE}/${scope.mode}/listings`;
  const kept = {
    status: filter.status,
    state: filter.state,
    warning: filter.warning,
    broker: filter.broker,
    q: filter.q,
  };
  return html`<h1>Listings</h1>
<form class="filters" method="get" action="${base}" role="search" aria-label="Filter listings">
${textField("q", "External ID or title", filter.q)}
${select(
  "status",
  "Status",
  LISTING_STATUSES.map((s) => ({ value: s, label: statusLabel(s) })),
  filter.status,
)}
${select(
  "state",
  "Processing state",
  REPORT_STATES.map((s) => ({ value: s, label: stateLabel(s) })),
  filter.state,
)}
${select(
  "warning",
  "Warning",
  LISTING_WARNING_CODES.map((c) => ({ value: c, label: c })),
  filter.warning,
)}
${textField("broker", "Broker (external ID)", filter.broker, "text")}
<button type="submit">Show</button>
</form>
${pending > 0 ? html`<p class="notice">${formatNumber(pending)} listing${pending === 1 ? " was" : "s were"} written moments ago and ${pending === 1 ? "is" : "are"} not in this list yet.</p>` : ""}
${
  page.rows.length === 0
    ? html`<p class="notice">No listing matches.</p>`
    : html`<div class="table-wrap"><table><caption class="muted">Newest write first</caption><thead><tr><th scope="col">Listing</th><th scope="col">Status</th><th scope="col">State</th><th scope="col" class="num">Score</th><th scope="col">Warnings</th><th scope="col">Broker</th><th scope="col">Last write</th></tr></thead><tbody>${page.rows.map(
        (r) =>
          html`<tr><th scope="row"><a href="${listingPath(scope, r.externalId)}">${r.title ?? r.externalId}</a><br><code class="muted">${r.externalId}</code></th><td>${statusLabel(r.status)}</td><td>${stateBadge(r.state)}</td><td class="num">${r.score}</td><td>${r.warnings.length === 0 ? html`<span class="good">None</span>` : r.warnings.map((w) => html`<span class="badge warn">${w}</span> `)}</td><td><a href="${BASE}/${scope.mode}/brokers/${encodeURIComponent(r.brokerExternalId)}">${r.brokerExternalId}</a></td><td>${formatTime(r.updatedAt)}</td></tr>`,
      )}</tbody></table></div>`
}
${pager(page.next, (cursor) => `${base}${queryOf({ ...kept, after: cursor })}`, !filter.after)}`;
}
