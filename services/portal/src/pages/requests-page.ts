// API requests: every partner request of the last 7 days, and for a 4xx the answer the partner got.
import { html, type Raw } from "@pss/html";
import type { RequestFilter, RequestRow } from "../reads/request-reads.ts";
import { STATUS_CLASSES } from "../reads/request-reads.ts";
import type { PortalScope } from "../reads/scope.ts";
import { formatTime, keyLabel } from "./format.ts";
import { BASE } from "./layout.ts";
import { pager, queryOf, select, textField } from "./parts.ts";

const tone = (status: number) => (status >= 500 ? "bad" : status >= 400 ? "warn" : "good");

export function requestsBody(
  scope: PortalScope,
  filter: RequestFilter,
  keys: { id: string; key_prefix: string; revoked: boolean }[],
  page: { rows: RequestRow[]; next: string | null },
): Raw {
  const base = `${BASE}/${scope.mode}/requests`;
  const kept = { class: filter.statusClass, path: filter.path, key: filter.keyId };
  return html`<h1>API requests</h1>
<p class="muted">Every request the partner's ${scope.mode} keys made in the last 7 days, newest first. Request bodies are never kept; a refused request (4xx) shows the answer it got.</p>
<form class="filters" method="get" action="${base}" role="search" aria-label="Filter requests">
${select(
  "class",
  "Status",
  STATUS_CLASSES.map((c) => ({ value: c, label: c })),
  filter.statusClass,
)}
${textField("path", "Path starts with", filter.path, "text")}
${select(
  "key",
  "Key",
  keys.map((k) => ({ value: k.id, label: `${keyLabel(k.key_prefix, k.id)}${k.revoked ? " (revoked)" : ""}` })),
  filter.keyId,
)}
<button type="submit">Show</button>
</form>
${
  page.rows.length === 0
    ? html`<p class="notice">No request matches.</p>`
    : html`<div class="table-wrap"><table><thead><tr><th scope="col">Time</th><th scope="col">Key</th><th scope="col">Request</th><th scope="col" class="num">Status</th><th scope="col" class="num">Duration</th><th scope="col">Request ID</th></tr></thead><tbody>${page.rows.map(
        (r) =>
          html`<tr><td>${formatTime(r.at)}</td><td>${keyLabel(r.keyPrefix, r.keyId)}</td><td><code>${r.method} ${r.path}</code>${r.error ? html`<details><summary>The answer</summary><pre>${JSON.stringify(r.error, null, 2)}</pre></details>` : ""}</td><td class="num"><span class="badge ${tone(r.status)}">${r.status}</span></td><td class="num">${r.durationMs.toFixed(1)} ms</td><td><code>${r.requestId}</code></td></tr>`,
      )}</tbody></table></div>`
}
${pager(page.next, (cursor) => `${base}${queryOf({ ...kept, before: cursor })}`, !filter.before)}`;
}
