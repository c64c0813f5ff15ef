// Cookies of the portal: parsed from the request, written with the flags every portal cookie carries (HttpOnly,
// SameSite=Lax, Path=/portal, Secure when the portal is served over HTTPS).

export function readCookies(request: Request): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (!out.has(name)) out.set(name, part.slice(eq + 1).trim());
  }
  return out;
}

export interface CookieOptions {
  /** Seconds; 0 deletes the cookie; undefined: a session cookie (gone when the browser closes). */
  maxAgeSeconds?: number;
  secure: boolean;
}

/** Values are ours (base64url tokens): nothing to escape. */
export function setCookie(name: string, value: string, opts: CookieOptions): string {
  const parts = [`${name}=${value}`, "Path=/portal", "HttpOnly", "SameSite=Lax"];
  if (opts.maxAgeSeconds !== undefined) parts.push(`Max-Age=${opts.maxAgeSeconds}`);
  if (opts.secure) parts.push("Secure");
  return parts.join("; ");
}

export const COOKIES = {
  /** The session (8 h idle, 7 d absolute; the server decides, the cookie lives as long as the absolute expiry). */
  session: "pss_portal_session",
  /** The browser that asks for a sign-in link: the link works only where this cookie is. */
  browser: "pss_portal_browser",
} as const;
