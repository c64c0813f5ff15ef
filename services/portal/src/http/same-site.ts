// Where a form post came from: browsers say it (Sec-Fetch-Site, Origin). A post from another site is refused before
// its CSRF token is even looked at; a client that sends neither still needs the token.
export function isFromPortal(request: Request, portalUrl: string): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") return false;
  const origin = request.headers.get("origin");
  if (origin === null) return true;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  return host === new URL(portalUrl).host || host === request.headers.get("host");
}
