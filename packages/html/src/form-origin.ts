// Cross-site form posts, for every server-rendered form (the buyers' inquiry form, the partner portal's forms, which
// add a CSRF token on top). The inquiry form needs no login, so there is no session to ride (the classic CSRF
// harm). What another site could still do is embed a copy of the form and make its visitors' browsers post
// inquiries: each from a different address, past the per-address limit. Browsers say where a form was posted
// from (Sec-Fetch-Site, Origin), so a post from another site is refused. Clients that send neither (curl,
// older browsers) are let through: they gain nothing over the JSON API, which has the same limits.

/** Whether a form post came from this site's own pages (or from a client that does not say). */
export function isSameSiteForm(request: Request, publicBaseUrl: string): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") return false;
  const origin = request.headers.get("origin");
  if (origin === null) return true;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    // "null" (sandboxed frames, privacy-sensitive redirects) or garbage: not our page.
    return false;
  }
  // The public host, or the host the request was sent to (a proxy may serve the site under another name).
  return host === new URL(publicBaseUrl).host || host === request.headers.get("host");
}
