// Webhooks: the endpoints (events, state, failure streak) with their actions (test event, secret rotation, replay),
// the delivery log with its filters, and a delivery's attempts with the first bytes of each answer (docs/portal.md,
// "Webhooks"). Every action is a form with the session's CSRF token; it runs through the partner API's own functions.
import { html, type Raw } from "@pss/html";
import { WEBHOOK_EVENT_TYPES, type WebhookDeliveryRecord, type WebhookEndpointRecord } from "@pss/contracts";
import type { Viewer } from "../auth/sessions.ts";
import type { PortalScope } from "../reads/scope.ts";
import { formatNumber, formatTime } from "./format.ts";
import { BASE, csrfField } from "./layout.ts";
import { queryOf, select, textField } from "./parts.ts";

export interface DeliveryFilterView {
  endpoint?: string;
  status?: string;
  event?: string;
  /** YYYY-MM-DD, UTC. */
  from?: string;
  to?: string;
  cursor?: string;
}

export const webhooksPath = (scope: PortalScope) => `${BASE}/${scope.mode}/webhooks`;
const deliveryPath = (scope: PortalScope, id: string) => `${webhooksPath(scope)}/deliveries/${id}`;
const endpointAction = (scope: PortalScope, endpointId: string, action: string) =>
  `${webhooksPath(scope)}/endpoints/${encodeURIComponent(endpointId)}/${action}`;

const STATUS_TONE: Record<string, string> = { delivered: "good", pending: "info", failed: "bad" };
const statusBadge = (status: string) => html`<span class="badge ${STATUS_TONE[status] ?? "info"}">${status}</span>`;
const answerOf = (code: number | null, error: string | null) => (code !== null ? `HTTP ${code}` : error ? error : "—");

/** The outcome of an action, as the page after it says it: fixed sentences, never text from the URL. */
export function noticeText(code: string | undefined, n: string | undefined): { text: string; tone: string } | null {
  const count = /^\d{1,9}$/.test(n ?? "") ? Number(n) : 0;
  switch (code) {
    case "resent":
      return {
        text: "The delivery is queued again: it is sent within seconds, with a fresh retry schedule.",
        tone: "good",
      };
    case "tested":
      return {
        text: "A test event (ping) is queued for the endpoint: its attempts show in the log below.",
        tone: "good",
      };
    case "replayed":
      return {
        text:
          count === 0
            ? "Nothing to replay: the range holds no event the endpoint subscribes to that is not already on its way."
            : `${formatNumber(count)} deliver${count === 1 ? "y is" : "ies are"} queued for the endpoint.`,
        tone: count === 0 ? "warn" : "good",
      };
    default:
      return null;
  }
}

export function webhooksBody(args: {
  scope: PortalScope;
  viewer: Viewer;
  endpoints: WebhookEndpointRecord[];
  streaks: Map<string, number>;
  deliveries: WebhookDeliveryRecord[];
  next: string | null;
  filter: DeliveryFilterView;
  notice: { text: string; tone: string } | null;
}): Raw {
  const { scope, viewer, filter } = args;
  const base = webhooksPath(scope);
  const kept = {
    endpoint: filter.endpoint,
    status: filter.status,
    event: filter.event,
    from: filter.from,
    to: filter.to,
  };
  return html`<h1>Webhooks</h1>
${args.notice ? html`<p class="notice ${args.notice.tone}" role="status">${args.notice.text}</p>` : ""}
<h2>Endpoints</h2>
${
  args.endpoints.length === 0
    ? html`<p class="muted">No endpoint in ${scope.mode} mode. Partners register them with PUT /partner/v1/webhook-endpoints/{endpointId}.</p>`
    : html`<ul class="plain endpoints">${args.endpoints.map((e) => {
        const streak = args.streaks.get(e.endpointId) ?? 0;
        return html`<li class="card"><h3><code>${e.endpointId}</code> ${e.enabled ? html`<span class="badge good">Enabled</span>` : html`<span class="badge bad">Disabled</span>`}</h3>
<p>${e.url}${e.description ? html` · <span class="muted">${e.description}</span>` : ""}</p>
<p><span class="muted">Events</span> ${e.events.join(", ")}</p>
${e.enabled ? "" : html`<p class="bad">${e.disabledReason ?? "Disabled"} (${formatTime(e.disabledAt)})</p>`}
<p>${e.failingSince ? html`<span class="bad">Failing since ${formatTime(e.failingSince)}: ${formatNumber(streak)}${streak >= 1000 ? "+" : ""} failed attempt${streak === 1 ? "" : "s"} in a row.</span>` : html`<span class="good">Answering.</span>`} <a href="${base}${queryOf({ endpoint: e.endpointId })}">Its deliveries</a></p>
<div class="actions">
<form method="post" action="${endpointAction(scope, e.endpointId, "test")}" class="inline">${csrfField(viewer)}<button type="submit" class="secondary">Send a test event</button></form>
<form method="post" action="${endpointAction(scope, e.endpointId, "rotate-secret")}" class="inline">${csrfField(viewer)}<button type="submit" class="secondary">Rotate the signing secret</button></form>
</div>
<details><summary>Replay events to this endpoint</summary>
<form method="post" action="${endpointAction(scope, e.endpointId, "replay")}" class="filters">${csrfField(viewer)}
${dateField("since", "From (UTC)", e.endpointId)}
${dateField("until", "Until (UTC)", e.endpointId)}
${numberField("afterSequence", "After number", e.endpointId)}
${numberField("throughSequence", "Through number", e.endpointId)}
<button type="submit">Replay</button>
</form>
<p class="muted">Every event of the range the endpoint subscribes to is sent again (or for the first time), as the change feed numbers them. Replays, resends and test events share one daily budget per partner, as through the API.</p>
</details></li>`;
      })}</ul>`
}
<h2>Delivery log</h2>
<form class="filters" method="get" action="${base}" role="search" aria-label="Filter deliveries">
${select(
  "endpoint",
  "Endpoint",
  args.endpoints.map((e) => ({ value: e.endpointId, label: e.endpointId })),
  filter.endpoint,
)}
${select(
  "status",
  "Status",
  ["pending", "delivered", "failed"].map((s) => ({ value: s, label: s })),
  filter.status,
)}
${select(
  "event",
  "Event",
  [...WEBHOOK_EVENT_TYPES, "ping"]
    .filter((t) => t !== "lead.received" || scope.leadAccess)
    .map((t) => ({ value: t, label: t })),
  filter.event,
)}
${textField("from", "Created from (UTC day)", filter.from, "date")}
${textField("to", "Created through (UTC day)", filter.to, "date")}
<button type="submit">Show</button>
</form>
${
  args.deliveries.length === 0
    ? html`<p class="notice">No delivery matches.</p>`
    : html`<div class="table-wrap"><table><thead><tr><th scope="col">Created</th><th scope="col">Event</th><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col">Last answer</th><th scope="col">Action</th></tr></thead><tbody>${args.deliveries.map(
        (d) =>
          html`<tr><td><a href="${deliveryPath(scope, d.deliveryId)}">${formatTime(d.createdAt)}</a></td><td>${d.eventType}</td><td><code>${d.endpointId}</code></td><td>${statusBadge(d.status)}${d.status === "pending" && d.nextAttemptAt ? html`<br><span class="muted">next ${formatTime(d.nextAttemptAt)}</span>` : ""}</td><td class="num">${d.attemptCount}</td><td>${answerOf(d.lastStatusCode, d.lastError)}</td><td>${d.status === "pending" ? "" : resendForm(scope, viewer, d.deliveryId)}</td></tr>`,
      )}</tbody></table></div>`
}
${args.next ? html`<nav class="pager" aria-label="Pages"><a href="${base}${queryOf({ ...kept, cursor: args.next })}" rel="next">Older deliveries</a></nav>` : ""}`;
}

function dateField(name: string, label: string, endpointId: string): Raw {
  const id = `${name}-${endpointId}`;
  return html`<div class="field"><label for="${id}">${label}</label><input type="datetime-local" id="${id}" name="${name}"></div>`;
}

function numberField(name: string, label: string, endpointId: string): Raw {
  const id = `${name}-${endpointId}`;
  return html`<div class="field"><label for="${id}">${label}</label><input type="text" inputmode="numeric" pattern="[0-9]*" id="${id}" name="${name}"></div>`;
}

function resendForm(scope: PortalScope, viewer: Viewer, deliveryId: string): Raw {
  return html`<form method="post" action="${deliveryPath(scope, deliveryId)}/resend" class="inline">${csrfField(viewer)}<button type="submit" class="secondary" aria-label="Resend the delivery of ${deliveryId}">Resend</button></form>`;
}

export function deliveryBody(args: {
  scope: PortalScope;
  viewer: Viewer;
  delivery: WebhookDeliveryRecord;
  excerpts: Map<number, string>;
  notice: { text: string; tone: string } | null;
}): Raw {
  const { scope, delivery: d } = args;
  return html`<p><a href="${webhooksPath(scope)}">← Webhooks</a></p>
<h1>Delivery <code>${d.deliveryId}</code></h1>
${args.notice ? html`<p class="notice ${args.notice.tone}" role="status">${args.notice.text}</p>` : ""}
<p>${statusBadge(d.status)} <span class="muted">Event</span> ${d.eventType} · <span class="muted">Endpoint</span> <code>${d.endpointId}</code> · <span class="muted">Created</span> ${formatTime(d.createdAt)}${d.deliveredAt ? html` · <span class="muted">Delivered</span> ${formatTime(d.deliveredAt)}` : ""}${d.status === "pending" && d.nextAttemptAt ? html` · <span class="muted">Next attempt</span> ${formatTime(d.nextAttemptAt)}` : ""}</p>
${d.status === "pending" ? "" : resendForm(scope, args.viewer, d.deliveryId)}
<h2>Attempts</h2>
${
  d.attempts.length === 0
    ? html`<p class="muted">No attempt yet.</p>`
    : html`<div class="table-wrap"><table><thead><tr><th scope="col" class="num">#</th><th scope="col">Time</th><th scope="col">Answer</th><th scope="col" class="num">Duration</th><th scope="col">First bytes of the answer</th></tr></thead><tbody>${d.attempts.map(
        (a) =>
          html`<tr><td class="num">${a.attempt}</td><td>${formatTime(a.at)}</td><td><span class="badge ${a.statusCode !== null && a.statusCode >= 200 && a.statusCode < 300 ? "good" : "bad"}">${answerOf(a.statusCode, a.error)}</span></td><td class="num">${formatNumber(a.latencyMs)} ms</td><td>${args.excerpts.has(a.attempt) ? html`<pre>${args.excerpts.get(a.attempt) ?? ""}</pre>` : html`<span class="muted">—</span>`}</td></tr>`,
      )}</tbody></table></div>`
}
<h2>The body sent (signed, the same on every attempt)</h2>
<pre>${JSON.stringify(d.payload, null, 2)}</pre>`;
}

export function secretBody(scope: PortalScope, endpointId: string, secret: string, previousExpiresAt: Date): Raw {
  return html`<p><a href="${webhooksPath(scope)}">← Webhooks</a></p>
<h1>New signing secret for <code>${endpointId}</code></h1>
<p class="notice warn" role="status">Copy it now: it is shown this once. Nobody can show it again, here or through the API.</p>
<p><span class="secret" data-secret="new">${secret}</span></p>
<p>Every delivery is signed with both the new and the previous secret until ${formatTime(previousExpiresAt)}: give the receiver the new one before then.</p>`;
}
