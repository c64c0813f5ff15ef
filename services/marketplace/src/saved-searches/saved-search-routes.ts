// The saved-search pages: saving (the search page's form), "check your inbox", confirming (a page with a button: a
// link scanner that opens the e-mail's link confirms nothing) and unsubscribing, also by RFC 8058's one-click POST a
// mail client sends to the List-Unsubscribe URL (from no page of ours, so no same-site check there: the token is the
// permission, and it only ever removes its own search).
import { Elysia } from "elysia";
import { clientAddress, readCappedBody, UnsupportedMediaTypeError, type TrustedProxies } from "@pss/http-kit";
import type { Server } from "bun";
import { isSameSiteForm } from "@pss/html";
import { html, page } from "../buyers/pages/html.ts";
import { SEARCH_FORM_FIELDS } from "../buyers/pages/search-page.ts";
import type { SavedSearches } from "./saved-searches.ts";

export interface SavedSearchRouteDeps {
  saved: SavedSearches;
  publicBaseUrl: string;
  maxBodyBytes: number;
  trustedProxies?: TrustedProxies;
}

const FORM_CONTENT_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i;
/** Tokens are 32 random bytes in base64url; anything else is no token of ours. */
const isToken = (t: string | null): t is string => t !== null && /^[A-Za-z0-9_-]{43}$/.test(t);

async function formOf(request: Request, maxBodyBytes: number): Promise<URLSearchParams> {
  if (!FORM_CONTENT_TYPE.test(request.headers.get("content-type") ?? "")) throw new UnsupportedMediaTypeError();
  return new URLSearchParams(new TextDecoder().decode(await readCappedBody(request, maxBodyBytes)));
}

const noStore = { "cache-control": "no-store", "referrer-policy": "no-referrer" };

function simplePage(base: string, path: string, title: string, body: ReturnType<typeof html>, status = 200) {
  const response = page({ title, description: title, canonicalUrl: `${base}${path}`, noIndex: true }, body, status);
  for (const [k, v] of Object.entries(noStore)) response.headers.set(k, v);
  return response;
}

const invalidLink = (base: string, path: string) =>
  simplePage(
    base,
    path,
    "Link not valid",
    html`<h1>This link is not valid</h1>
<p>It may have been used already, or expired (a confirmation link works for a week), or the search was removed.</p>
<p><a href="/listings">Search businesses for sale</a></p>`,
    404,
  );

export function createSavedSearchRoutes(deps: SavedSearchRouteDeps) {
  const { saved, publicBaseUrl: base } = deps;
  return new Elysia({ name: "saved-search-routes" })
    .post("/saved-searches", async ({ request, server }) => {
      if (!isSameSiteForm(request, base))
        return simplePage(
          base,
          "/saved-searches",
          "Search not saved",
          html`<h1>Search not saved</h1><p>Searches can only be saved from the search page's own form.</p><p><a href="/listings">Search businesses for sale</a></p>`,
          403,
        );
      const form = await formOf(request, deps.maxBodyBytes);
      // A person never sees the field: a bot that fills it is answered as if it worked.
      if (form.get("website"))
        return new Response(null, { status: 303, headers: { location: "/saved-searches/sent" } });
      const raw: Record<string, string> = {};
      for (const field of SEARCH_FORM_FIELDS) {
        const v = form.get(field);
        if (v !== null && v.trim() !== "") raw[field] = v;
      }
      const email = form.get("email") ?? "";
      const answer = await saved.save({
        email,
        raw,
        clientAddress: clientAddress(
          request,
          (server as Pick<Server<unknown>, "requestIP"> | null) ?? null,
          deps.trustedProxies,
        ),
      });
      if (answer.kind === "check-inbox")
        return new Response(null, { status: 303, headers: { location: "/saved-searches/sent", ...noStore } });
      if (answer.kind === "rate-limited") {
        const minutes = Math.max(1, Math.ceil(answer.retryAfterSeconds / 60));
        const res = simplePage(
          base,
          "/saved-searches",
          "Search not saved",
          html`<h1>Search not saved</h1><p>Too many searches were saved from your network recently. Please try again in about ${minutes} minute${minutes === 1 ? "" : "s"}.</p>`,
          429,
        );
        res.headers.set("retry-after", String(answer.retryAfterSeconds));
        return res;
      }
      const back = `/listings${new URLSearchParams(raw).size ? `?${new URLSearchParams(raw)}` : ""}`;
      return simplePage(
        base,
        "/saved-searches",
        "Search not saved",
        html`<h1>Search not saved</h1>
<div class="error-summary" role="alert"><ul>
${answer.emailProblem ? html`<li>${answer.emailProblem}</li>` : ""}
${answer.problems.map((p) => html`<li>${p.hint}</li>`)}
</ul></div>
<p><a href="${back}">Back to the search</a></p>`,
        400,
      );
    })
    .get("/saved-searches/sent", () =>
      simplePage(
        base,
        "/saved-searches/sent",
        "Check your inbox",
        html`<h1>Check your inbox</h1>
<p>If the address can take more saved searches, an e-mail with a confirmation link is on its way. Nothing else is sent until you confirm.</p>
<p><a href="/listings">Back to the search</a></p>`,
      ),
    )
    .get("/saved-searches/confirm", async ({ request }) => {
      const token = new URL(request.url).searchParams.get("token");
      const pending = isToken(token) ? await saved.findPending(token) : null;
      if (!pending) return invalidLink(base, "/saved-searches/confirm");
      return simplePage(
        base,
        "/saved-searches/confirm",
        "Confirm your saved search",
        html`<h1>Confirm your saved search</h1>
<p><strong>${pending.label}</strong></p>
<form method="post" action="/saved-searches/confirm"><input type="hidden" name="token" value="${token}"><button type="submit">Confirm the e-mail alerts</button></form>`,
      );
    })
    .post("/saved-searches/confirm", async ({ request }) => {
      if (!isSameSiteForm(request, base)) return invalidLink(base, "/saved-searches/confirm");
      const token = (await formOf(request, deps.maxBodyBytes)).get("token");
      const confirmed = isToken(token) ? await saved.confirm(token) : null;
      if (!confirmed) return invalidLink(base, "/saved-searches/confirm");
      const links = saved.links(confirmed.query, confirmed.unsubscribeToken);
      return simplePage(
        base,
        "/saved-searches/confirm",
        "Search saved",
        html`<h1>Your search is saved</h1>
<p><a href="${links.searchUrl}"><strong>${confirmed.label}</strong></a>: you will get an e-mail with the businesses newly listed or reduced in price that match it. Every e-mail has a one-click unsubscribe link.</p>
<p><a href="${links.unsubscribeUrl}">Unsubscribe now</a></p>`,
      );
    })
    .get("/saved-searches/unsubscribe", async ({ request }) => {
      const token = new URL(request.url).searchParams.get("token");
      const found = isToken(token) ? await saved.findByUnsubscribeToken(token) : null;
      if (!found)
        return simplePage(
          base,
          "/saved-searches/unsubscribe",
          "Unsubscribed",
          html`<h1>Nothing to unsubscribe</h1><p>This search is not saved (any more): no e-mails are sent for it.</p>`,
        );
      return simplePage(
        base,
        "/saved-searches/unsubscribe",
        "Unsubscribe",
        html`<h1>Unsubscribe</h1>
<p>Stop the e-mails of your saved search <strong>${found.label}</strong>?</p>
<form method="post" action="/saved-searches/unsubscribe?token=${token}"><button type="submit">Unsubscribe</button></form>`,
      );
    })
    .post("/saved-searches/unsubscribe", async ({ request }) => {
      // RFC 8058: the mail client POSTs "List-Unsubscribe=One-Click" to the URL, the token in its query. The page's
      // button posts to the same URL. Either way one request removes the search; a repeat finds nothing, harmlessly.
      const token = new URL(request.url).searchParams.get("token");
      const label = isToken(token) ? await saved.unsubscribe(token) : null;
      return simplePage(
        base,
        "/saved-searches/unsubscribe",
        "Unsubscribed",
        label
          ? html`<h1>Unsubscribed</h1><p>No more e-mails for <strong>${label}</strong>. An address without saved searches is deleted.</p>`
          : html`<h1>Nothing to unsubscribe</h1><p>This search is not saved (any more): no e-mails are sent for it.</p>`,
      );
    });
}
