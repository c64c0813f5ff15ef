// Keeps secrets out of log lines and configuration errors: passwords in URLs, secret query parameters
// (presigned object-storage URLs' signatures and credentials among them), object-storage secret keys named in
// JSON fields, bearer tokens and full e-mail addresses. Works on text that may not parse as a URL at all, since an
// unparsable DATABASE_URL is exactly the one that gets reported.

const SECRET_PARAM =
  /([?&;](?:password|passwd|pwd|pass|secret|token|access_token|api[_-]?key|apikey|sslpassword|auth|x-amz-signature|x-amz-credential|x-amz-security-token|signature)=)[^&#\s'"]*/gi;
// "secretAccessKey":"…", "S3_SECRET_ACCESS_KEY":"…", "sessionToken":"…" in a JSON line.
const SECRET_FIELD =
  /("(?:secret_?access_?key|s3_secret_access_key|session_?token|s3_session_token)"\s*:\s*")(?:[^"\\]|\\.)*"/gi;
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
  if (!text.includes("@") && !text.includes("=") && !text.includes("Bearer") && !/secret|session_?token/i.test(text))
    return text;
  return text
    .replace(SECRET_FIELD, '$1***"')
    .replace(URL_USERINFO, (_, scheme: string, userinfo: string) => `${scheme}${maskUserinfo(userinfo)}@`)
    .replace(SECRET_PARAM, "$1***")
    .replace(BEARER, "$1***")
    .replace(EMAIL, "$1***@$2");
}
