// Keeps secrets out of log lines and configuration errors: passwords in URLs, secret query parameters,
// bearer tokens and full e-mail addresses. Works on text that may not parse as a URL at all, since an
// unparsable DATABASE_URL is exactly the one that gets reported.

const SECRET_PARAM = /([?&;](?:password|passwd|pwd|pass|secret|token|access_token|api[_-]?key|apikey|sslpassword|auth)=)[^&#\s'"]*/gi;
// scheme://userinfo@ : userinfo runs to the last '@' before whitespace or a quote, so a password holding
// '@', '/' or ':' (the usual reason a URL fails to parse) is covered whole.
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s'"<>]*)@/gi;
const BEARER = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]+/g;
const EMAIL = /\b([A-Za-z0-9._%+-])[A-Za-z0-9._%+-]*@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})\b/g;

function maskUserinfo(userinfo: string): string {
  const colon = userinfo.indexOf(":");
  // "user:password" keeps the user name (it helps find the misconfiguration); a lone token is hidden whole.
  return colon >= 0 ? `${userinfo.slice(0, colon)}:***` : userinfo === "" ? "" : "***";
}

/**
 * A URL (parsable or not) without its password or secret query parameters. The whole value is taken as
 * the URL, so everything before its last '@' is user information, spaces and all.
 */
export function redactUrl(value: string): string {
  const [, scheme = "", rest = ""] = /^([a-z][a-z0-9+.-]*:\/\/)?(.*)$/is.exec(value)!;
  const at = rest.lastIndexOf("@");
  const masked = at >= 0 ? maskUserinfo(rest.slice(0, at)) + rest.slice(at) : rest;
  return (scheme + masked).replace(SECRET_PARAM, "$1***");
}

/** Free text (a log message, an error message, a stack) with every secret this module knows masked. */
export function redactSecrets(text: string): string {
  if (!text.includes("@") && !text.includes("=") && !text.includes("Bearer")) return text;
  return text
    .replace(URL_USERINFO, (_, scheme: string, userinfo: string) => `${scheme}${maskUserinfo(userinfo)}@`)
    .replace(SECRET_PARAM, "$1***")
    .replace(BEARER, "$1***")
    .replace(EMAIL, "$1***@$2");
}
