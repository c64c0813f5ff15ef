// The pages before a session: asking for a link, "check your e-mail", a refused link, the limits, a refused form.
import { html } from "@pss/html";
import type { LinkRefusal } from "../auth/sign-in.ts";
import { BASE, plainPage } from "./layout.ts";

export function signInPage(args: {
  csrf: string;
  email?: string;
  notice?: string;
  status?: number;
  headers?: Record<string, string>;
}) {
  return plainPage(
    "Sign in",
    html`<h1>Sign in to the partner portal</h1>
${args.notice ? html`<p class="notice">${args.notice}</p>` : ""}
<p>Enter the e-mail address your partner invited. We send a sign-in link to it: it works once, for 15 minutes, in this browser.</p>
<form method="post" action="${BASE}/sign-in">
<input type="hidden" name="csrf" value="${args.csrf}">
<div class="field"><label for="email">E-mail address</label><input type="email" id="email" name="email" autocomplete="email" required value="${args.email ?? ""}"></div>
<button type="submit">Send me a sign-in link</button>
</form>`,
    args.status,
    args.headers,
  );
}

/** The one answer to every request for a link, invited address or not. */
export function checkEmailPage(headers: Record<string, string>) {
  return plainPage(
    "Check your e-mail",
    html`<h1>Check your e-mail</h1>
<p>If this address may sign in to a partner portal, a sign-in link is on its way to it. Open it in this browser within 15 minutes.</p>
<p class="muted">Nothing arrived? Check the spam folder, or <a href="${BASE}/sign-in">ask again</a>. Partners invite their staff through the API or their account manager.</p>`,
    200,
    headers,
  );
}

const REFUSALS: Record<LinkRefusal, { status: number; title: string; text: string }> = {
  expired: {
    status: 410,
    title: "This sign-in link has expired",
    text: "Sign-in links work for 15 minutes. Ask for a new one: it takes a moment.",
  },
  used: {
    status: 410,
    title: "This sign-in link was already used",
    text: "Each sign-in link works once. If you signed in with it already, open the portal; otherwise ask for a new link.",
  },
  unknown: {
    status: 404,
    title: "This sign-in link is not valid",
    text: "Check that the whole link was copied, or ask for a new one.",
  },
  "other-browser": {
    status: 403,
    title: "Open this link in the browser where you asked for it",
    text: "For your safety a sign-in link works only in the browser that asked for it. Open it there, or ask for a new link from this browser.",
  },
};

export function linkRefusedPage(reason: LinkRefusal) {
  const r = REFUSALS[reason];
  return plainPage(
    r.title,
    html`<h1>${r.title}</h1><p>${r.text}</p><p><a href="${BASE}/sign-in">Ask for a new sign-in link</a></p>`,
    r.status,
  );
}

export function limitedPage(retryAfterSeconds: number) {
  const minutes = Math.ceil(retryAfterSeconds / 60);
  return plainPage(
    "Too many sign-in requests",
    html`<h1>Too many sign-in requests</h1><p>Too many sign-in links were asked for from here or for this address in the last hour. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.</p>`,
    429,
    { "retry-after": String(retryAfterSeconds) },
  );
}

/** A form post without this portal's token for this browser (a forged or outdated form). */
export function formRefusedPage() {
  return plainPage(
    "This form was not accepted",
    html`<h1>This form was not accepted</h1><p>It did not come from this portal's own page, or the page was open for too long. Go back, reload the page and try again.</p><p><a href="${BASE}/">Open the portal</a></p>`,
    403,
  );
}

export function notFoundPage() {
  return plainPage("Not found", html`<h1>Page not found</h1><p><a href="${BASE}/">Open the portal</a></p>`, 404);
}

export function unavailablePage() {
  return plainPage(
    "Temporarily unavailable",
    html`<h1>The portal is temporarily unavailable</h1><p>Its database does not answer. Try again in a few seconds.</p>`,
    503,
    { "retry-after": "2" },
  );
}
