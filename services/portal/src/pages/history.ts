// A record's change history as a timeline: who changed which field, through which key, in which request.
import { html, raw, type Raw } from "@pss/html";
import type { FieldChange } from "@pss/contracts";
import { formatTime, keyLabel } from "./format.ts";

export interface HistoryEntryView {
  version: number;
  changedAt: string;
  keyId: string | null;
  requestId: string | null;
  created: boolean;
  changes: FieldChange[];
  statusChange?: { from: string | null; to: string } | null;
}

/** A changed value as text: strings as they are, anything else as JSON, long ones cut, e-mail addresses masked. */
function valueText(value: unknown): string {
  if (value === undefined || value === null) return "(none)";
  const text = (typeof value === "string" ? value : JSON.stringify(value)).replace(
    /([A-Za-z0-9._%+-])[A-Za-z0-9._%+-]*(@[A-Za-z0-9.-]+\.[A-Za-z]{2,})/g,
    "$1***$2",
  );
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
}

/** The page position of older entries: the history cursor the API hands out (["h1", "<id>"] in base64url). */
export function historyBeforeId(cursor: string | undefined): string | null {
  if (!cursor || !/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  try {
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString());
    if (
      Array.isArray(parsed) &&
      parsed[0] === "h1" &&
      typeof parsed[1] === "string" &&
      /^[1-9][0-9]{0,17}$/.test(parsed[1])
    )
      return parsed[1];
  } catch {}
  return null;
}

export function historyTimeline(
  entries: HistoryEntryView[],
  keyPrefixes: Map<string, string>,
  older: string | null,
): Raw {
  if (entries.length === 0) return html`<p class="muted">No change is recorded (history is kept for 180 days).</p>`;
  return html`<ol class="timeline">${entries.map(
    (e) =>
      html`<li><p><strong>Version ${e.version}</strong>${e.created ? " (created)" : ""} · ${formatTime(e.changedAt)} · through ${keyLabel(keyPrefixes.get(e.keyId ?? "") ?? null, e.keyId)}${e.requestId ? html` · request <code>${e.requestId}</code>` : ""}</p>
${e.statusChange ? html`<p>Status: ${e.statusChange.from ?? "(new)"} → <strong>${e.statusChange.to}</strong></p>` : ""}
${
  e.changes.length === 0
    ? ""
    : html`<ul>${e.changes.map((c) => html`<li><code>${c.path}</code>: ${valueText((c as { from?: unknown }).from)} → ${valueText((c as { to?: unknown }).to)}</li>`)}</ul>`
}</li>`,
  )}</ol>${older ? html`<p><a href="?history=${raw(encodeURIComponent(older))}#history">Older changes</a></p>` : ""}`;
}
