// Brokers and a broker's page: listings, avatar, warnings, lead forwarding (masked), history (docs/portal.md).
import { html, type Raw } from "@pss/html";
import type { QualityWarning } from "@pss/contracts";
import type { BrokerRow } from "../reads/broker-reads.ts";
import type { ListingRow } from "../reads/listing-reads.ts";
import type { PortalScope } from "../reads/scope.ts";
import { formatNumber, formatTime, maskEmail } from "./format.ts";
import { historyTimeline, type HistoryEntryView } from "./history.ts";
import { BASE } from "./layout.ts";
import { listingPath } from "./listings-page.ts";
import { mediaBadge, pager, queryOf, stateBadge, textField, warningList } from "./parts.ts";

export const brokerPath = (scope: PortalScope, externalId: string) =>
  `${BASE}/${scope.mode}/brokers/${encodeURIComponent(externalId)}`;

export function brokersBody(
  scope: PortalScope,
  q: string | undefined,
  after: string | undefined,
  page: { rows: BrokerRow[]; next: string | null },
): Raw {
  const base = `${BASE}/${scope.mode}/brokers`;
  return html`<h1>Brokers</h1>
<form class="filters" method="get" action="${base}" role="search" aria-label="Find brokers">${textField("q", "External ID or name", q)}<button type="submit">Show</button></form>
${
  page.rows.length === 0
    ? html`<p class="notice">No broker matches.</p>`
    : html`<div class="table-wrap"><table><thead><tr><th scope="col">Broker</th><th scope="col">Avatar</th><th scope="col" class="num">Listings</th></tr></thead><tbody>${page.rows.map(
        (b) =>
          html`<tr><th scope="row"><a href="${brokerPath(scope, b.externalId)}">${b.name}</a><br><code class="muted">${b.externalId}</code></th><td>${mediaBadge(b.avatarState)}</td><td class="num"><a href="${BASE}/${scope.mode}/listings${queryOf({ broker: b.externalId })}">${formatNumber(b.listings)}</a></td></tr>`,
      )}</tbody></table></div>`
}
${pager(page.next, (cursor) => `${base}${queryOf({ q, after: cursor })}`, !after)}`;
}

export interface BrokerPageData {
  externalId: string;
  name: string;
  email: string;
  phone: string | null;
  forwardingEmail: string | null;
  avatar: {
    url: string | null;
    state: string | null;
    failureReason: string | null;
    width: number | null;
    height: number | null;
    thumbnail: string | null;
  };
  warnings: QualityWarning[];
  score: number;
  link: string;
  listings: { rows: ListingRow[]; more: boolean };
  history: HistoryEntryView[];
  olderHistory: string | null;
  keyPrefixes: Map<string, string>;
}

export function brokerBody(scope: PortalScope, d: BrokerPageData): Raw {
  return html`<p><a href="${BASE}/${scope.mode}/brokers">← Brokers</a></p>
<h1>${d.name}</h1>
<p><span class="muted">External ID</span> <code>${d.externalId}</code> · <a href="${d.link}">${scope.mode === "test" ? "Preview of this test record" : "The broker's public profile"}</a></p>
<div class="two"><section aria-labelledby="details"><h2 id="details">Details</h2>
<dl><dt>E-mail</dt><dd>${maskEmail(d.email)}</dd><dt>Phone</dt><dd>${d.phone ?? "—"}</dd>
<dt>Leads forwarded to</dt><dd>${d.forwardingEmail ? maskEmail(d.forwardingEmail) : html`${maskEmail(d.email)} <span class="muted">(no forwarding address: the broker's own)</span>`}</dd></dl>
<h3>Avatar</h3>
<p>${mediaBadge(d.avatar.state)}${d.avatar.width ? html` ${d.avatar.width}×${d.avatar.height} px` : ""}</p>
${d.avatar.thumbnail ? html`<img src="${d.avatar.thumbnail}" alt="Avatar of ${d.name}" width="96" height="96" style="border-radius:50%;object-fit:cover">` : ""}
${d.avatar.failureReason ? html`<p class="bad">${d.avatar.failureReason}</p>` : ""}
</section>
<section aria-labelledby="quality"><h2 id="quality">Quality</h2>${warningList(d.warnings, d.score)}</section></div>
<section aria-labelledby="listings"><h2 id="listings">Listings</h2>${
    d.listings.rows.length === 0
      ? html`<p class="muted">No listing.</p>`
      : html`<div class="table-wrap"><table><thead><tr><th scope="col">Listing</th><th scope="col">State</th><th scope="col" class="num">Score</th><th scope="col">Last write</th></tr></thead><tbody>${d.listings.rows.map(
          (r) =>
            html`<tr><th scope="row"><a href="${listingPath(scope, r.externalId)}">${r.title ?? r.externalId}</a></th><td>${stateBadge(r.state)}</td><td class="num">${r.score}</td><td>${formatTime(r.updatedAt)}</td></tr>`,
        )}</tbody></table></div>${d.listings.more ? html`<p><a href="${BASE}/${scope.mode}/listings${queryOf({ broker: d.externalId })}">All of this broker's listings</a></p>` : ""}`
  }</section>
<section aria-labelledby="history"><h2 id="history">Change history</h2>${historyTimeline(d.history, d.keyPrefixes, d.olderHistory)}</section>`;
}
