// The frame of every portal page: who is signed in for which partner, the sections, the live/test switch, sign-out.
// No script anywhere (the CSP forbids it); every form carries its CSRF token.
import { html, raw, renderToString, type Raw } from "@pss/html";
import type { RecordMode } from "@pss/contracts";
import { csrfTokenFor } from "../auth/tokens.ts";
import type { Viewer } from "../auth/sessions.ts";
import { STYLE } from "./style.ts";

export const BASE = "/portal";

/** No scripts; images from anywhere http(s) (photo variants are served by the API's host); forms post only here. */
export const PORTAL_CSP =
  "default-src 'none'; img-src 'self' https: http: data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": PORTAL_CSP,
  "x-content-type-options": "nosniff",
  // Portal URLs name listings, filters and sign-in links: never sent to another site. (Not no-referrer: with it the
  // browser sends "Origin: null" on the portal's own forms, which the same-site check must refuse.)
  "referrer-policy": "same-origin",
  // A partner's data: never kept by a shared cache or the browser's back-forward history on a shared machine.
  "cache-control": "no-store",
} as const;

export type Section = "overview" | "listings" | "brokers" | "webhooks" | "requests" | "account";

const SECTIONS: { id: Section; label: string; path: string }[] = [
  { id: "overview", label: "Overview", path: "" },
  { id: "listings", label: "Listings", path: "/listings" },
  { id: "brokers", label: "Brokers", path: "/brokers" },
  { id: "webhooks", label: "Webhooks", path: "/webhooks" },
  { id: "requests", label: "API requests", path: "/requests" },
];

export const sectionPath = (mode: RecordMode, section: Section) =>
  section === "account" ? `${BASE}/account` : `${BASE}/${mode}${SECTIONS.find((s) => s.id === section)?.path ?? ""}`;

/** A form's hidden CSRF field for the signed-in viewer. */
export const csrfField = (viewer: Viewer) =>
  html`<input type="hidden" name="csrf" value="${csrfTokenFor(viewer.sessionToken)}">`;

function documentOf(title: string, header: Raw, body: Raw): string {
  return renderToString(html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${title} · Partner portal</title>
<style>${raw(STYLE)}</style>
</head>
<body>
<a class="skip" href="#content">Skip to content</a>
${header}
<main id="content">
${body}
</main>
</body>
</html>
`);
}

export function respond(document: string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(document, { status, headers: { ...PAGE_HEADERS, ...headers } });
}

/** A page of a signed-in viewer, in one mode's data. */
export function portalPage(args: {
  viewer: Viewer;
  mode: RecordMode;
  section: Section;
  title: string;
  body: Raw;
  status?: number;
  headers?: Record<string, string>;
}): Response {
  const { viewer, mode, section } = args;
  const other: RecordMode = mode === "live" ? "test" : "live";
  const header = html`<header class="top"><div class="bar">
<a class="brand" href="${BASE}/${mode}">${viewer.partnerName} · Partner portal</a>
<nav class="main" aria-label="Sections"><ul>${SECTIONS.map(
    (s) =>
      html`<li><a href="${sectionPath(mode, s.id)}"${section === s.id ? raw(' aria-current="page"') : ""}>${s.label}</a></li>`,
  )}</ul></nav>
<nav class="modes" aria-label="Live or test data"><ul><li><a href="${sectionPath("live", section === "account" ? "overview" : section)}"${mode === "live" ? raw(' aria-current="true"') : ""}>Live</a></li><li><a href="${sectionPath("test", section === "account" ? "overview" : section)}"${mode === "test" ? raw(' aria-current="true"') : ""}>Test</a></li></ul></nav>
<a href="${BASE}/account"${section === "account" ? raw(' aria-current="page"') : ""}>${viewer.email}</a>
<form method="post" action="${BASE}/sign-out">${csrfField(viewer)}<button type="submit">Sign out</button></form>
</div></header>
${mode === "test" ? html`<p class="test-banner">Test mode: records written with test keys (pss_test_…), never shown to buyers. <a href="${sectionPath(other, section === "account" ? "overview" : section)}">Show live data</a></p>` : ""}`;
  return respond(documentOf(args.title, header, args.body), args.status, args.headers);
}

/** A page without the sections: signing in, errors before a session. */
export function plainPage(title: string, body: Raw, status = 200, headers: Record<string, string> = {}): Response {
  const header = html`<header class="top"><div class="bar"><a class="brand" href="${BASE}/">Partner portal</a></div></header>`;
  return respond(documentOf(title, header, html`<div class="sign-in">${body}</div>`), status, headers);
}
