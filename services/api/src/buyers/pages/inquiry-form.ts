// The inquiry form on a listing page. A plain form (application/x-www-form-urlencoded, no JavaScript) that
// posts to /listings/{id}/inquiry; the server validates and answers with this form again, errors beside their
// fields, or redirects to the confirmation page. `novalidate`: the server is the one validator, so people get
// the same messages whatever their browser does. A hidden key, new on every rendering, makes sending the same form
// twice (a double click, a retry) one inquiry (lead-form.ts).
import { LEAD_MESSAGE_MAX, Limits } from "@pss/contracts";
import { FORM_KEY_FIELD } from "../../leads/lead-form.ts";
import { html, type Raw } from "./html.ts";

export const INQUIRY_FIELDS = ["name", "email", "phone", "message"] as const;
export type InquiryField = (typeof INQUIRY_FIELDS)[number];

export interface InquiryFormState {
  values: Partial<Record<InquiryField, string>>;
  errors: Partial<Record<InquiryField, string>>;
  /** A problem that is not one field's (e.g. too many inquiries). */
  notice?: string;
}

const LABELS: Record<InquiryField, string> = {
  name: "Your name",
  email: "Your e-mail address",
  phone: "Your phone number (optional)",
  message: "Your message",
};

export function inquiryActionPath(listingId: number | string): string {
  return `/listings/${listingId}/inquiry`;
}

function field(state: InquiryFormState | null, name: InquiryField, input: (attrs: Raw) => Raw, hint?: string): Raw {
  const id = `inquiry-${name}`;
  const error = state?.errors[name];
  const described = [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(" ");
  const attrs = html` id="${id}" name="${name}"${described ? html` aria-describedby="${described}"` : ""}${error ? html` aria-invalid="true"` : ""}`;
  return html`<div class="field"><label for="${id}">${LABELS[name]}</label>
${hint ? html`<p class="muted" id="${id}-hint">${hint}</p>` : ""}
${error ? html`<p class="error" id="${id}-error">${error}</p>` : ""}
${input(attrs)}</div>`;
}

export function inquiryForm(
  listing: { serviceListingId: number; broker: { name: string } },
  state: InquiryFormState | null,
): Raw {
  const v = state?.values ?? {};
  const problems = INQUIRY_FIELDS.filter((f) => state?.errors[f]);
  return html`<section id="inquiry" class="inquiry" aria-labelledby="inquiry-heading">
<h2 id="inquiry-heading">Ask the broker about this business</h2>
<p class="muted">Your message goes to ${listing.broker.name}, who will reply by e-mail. Your details are never shown on this site.</p>
${state?.notice ? html`<div class="error-summary" role="alert"><p>${state.notice}</p></div>` : ""}
${
  problems.length
    ? html`<div class="error-summary" role="alert" aria-labelledby="inquiry-problems"><h3 id="inquiry-problems">Your inquiry was not sent</h3><ul>
${problems.map((f) => html`<li><a href="#inquiry-${f}">${LABELS[f]}</a>: ${state!.errors[f]!}</li>`)}
</ul></div>`
    : ""
}
<form method="post" action="${inquiryActionPath(listing.serviceListingId)}#inquiry" novalidate>
${field(state, "name", (a) => html`<input type="text"${a} value="${v.name ?? ""}" autocomplete="name" maxlength="${Limits.shortText}" required>`)}
${field(state, "email", (a) => html`<input type="email"${a} value="${v.email ?? ""}" autocomplete="email" maxlength="254" required>`)}
${field(state, "phone", (a) => html`<input type="tel"${a} value="${v.phone ?? ""}" autocomplete="tel" maxlength="40">`)}
${field(state, "message", (a) => html`<textarea${a} rows="6" maxlength="${LEAD_MESSAGE_MAX}" required>${v.message ?? ""}</textarea>`, "For example: what you would like to know, and when you could talk.")}
<div class="hp" aria-hidden="true"><label for="inquiry-website">Leave this field empty</label><input type="text" id="inquiry-website" name="website" tabindex="-1" autocomplete="off"></div>
<input type="hidden" name="${FORM_KEY_FIELD}" value="${crypto.randomUUID()}">
<button type="submit">Send inquiry</button>
</form>
</section>`;
}
