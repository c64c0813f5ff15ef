// Pieces several pages use: state badges, warning lists, pagers, filter forms' fields.
import { html, raw, type Raw } from "@pss/html";
import { WARNING_FIXES, type QualityWarning, type WarningCode } from "@pss/contracts";

export const REPORT_STATES = ["LIVE", "LIVE_WITH_WARNINGS", "PROCESSING", "NOT_VISIBLE", "FAILED"] as const;
export { LISTING_STATUSES } from "@pss/contracts";

const STATE_LOOK: Record<string, { label: string; tone: string }> = {
  LIVE: { label: "Live", tone: "good" },
  LIVE_WITH_WARNINGS: { label: "Live, with warnings", tone: "warn" },
  PROCESSING: { label: "Processing", tone: "info" },
  NOT_VISIBLE: { label: "Not visible", tone: "info" },
  FAILED: { label: "Failed", tone: "bad" },
};

export const stateLabel = (state: string) => STATE_LOOK[state]?.label ?? state;
export const stateBadge = (state: string) =>
  html`<span class="badge ${STATE_LOOK[state]?.tone ?? "info"}">${stateLabel(state)}</span>`;

export const statusLabel = (status: string) =>
  status
    .replace(/_/g, " ")
    .toLowerCase()
    .replace(/^./, (c) => c.toUpperCase());

export const fixOf = (code: string) => WARNING_FIXES[code as WarningCode] ?? "";

/** A record's warnings, each with its field and what to do; a green line when there are none. */
export function warningList(warnings: readonly QualityWarning[], score: number): Raw {
  if (warnings.length === 0)
    return html`<p class="notice good" data-quality="clean"><strong class="good">No warnings.</strong> Quality score ${score} of 100: buyers miss nothing.</p>`;
  return html`<p class="notice warn" data-quality="warnings"><strong class="warn">${warnings.length} warning${warnings.length === 1 ? "" : "s"}.</strong> Quality score ${score} of 100.</p>
<ul class="plain warnings">${warnings.map(
    (w) =>
      html`<li class="card"><p><span class="badge warn">${w.code}</span> <code>${w.path}</code></p><p>${w.message}</p><p class="muted">How to fix: ${fixOf(w.code)}</p></li>`,
  )}</ul>`;
}

export function pager(next: string | null, url: (cursor: string | null) => string, first: boolean): Raw {
  if (!next && first) return raw("");
  return html`<nav class="pager" aria-label="Pages">${first ? "" : html`<a href="${url(null)}">First page</a>`}${next ? html`<a href="${url(next)}" rel="next">Next page</a>` : ""}</nav>`;
}

export function select(
  name: string,
  label: string,
  options: readonly { value: string; label: string }[],
  value?: string,
): Raw {
  const id = `f-${name}`;
  return html`<div class="field"><label for="${id}">${label}</label><select id="${id}" name="${name}"><option value="">Any</option>${options.map(
    (o) => html`<option value="${o.value}"${o.value === value ? raw(" selected") : ""}>${o.label}</option>`,
  )}</select></div>`;
}

export function textField(name: string, label: string, value: string | undefined, type = "search"): Raw {
  const id = `f-${name}`;
  return html`<div class="field"><label for="${id}">${label}</label><input type="${type}" id="${id}" name="${name}" value="${value ?? ""}"></div>`;
}

/** A query string of the non-empty values (for links that keep the filters). */
export function queryOf(values: Record<string, string | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v) params.set(k, v);
  const s = params.toString();
  return s ? `?${s}` : "";
}

/** A photo's or avatar's processing state. */
export function mediaBadge(state: string | null): Raw {
  if (state === "ready") return html`<span class="badge good">Ready</span>`;
  if (state === "failed") return html`<span class="badge bad">Failed</span>`;
  if (state === "pending") return html`<span class="badge info">Pending</span>`;
  return html`<span class="badge info">None</span>`;
}
