// The server's text rules as regular expressions: one source for the checks the API runs and for the patterns
// the OpenAPI document declares. Every pattern is valid, and means the same, in JavaScript with the u flag and in
// Python's re (no \s or \d, whose meaning differs between the two; explicit classes instead).

// Lone surrogates are not named here: JSON Schema tools (Rust and Python regex engines) cannot express them, and
// the HTTP edge refuses them in every body before any pattern is checked; a URL path decodes them to U+FFFD.
/** Control characters, C1 controls and U+FFFD (what a broken percent-escape decodes to). */
const NOT_TEXT = "\\u0000-\\u001F\\u007F-\\u009F\\uFFFD";
/** What String.prototype.trim() removes, apart from the controls above. */
const SPACE = "\\u0020\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000\\uFEFF";
/** Every character trim() removes (for parameters that the server trims). */
export const TRIMMED = `[\\u0009-\\u000D${SPACE}]`;

const EDGE = `[^${NOT_TEXT}${SPACE}]`;
const EDGE_NOT_DOT = `[^${NOT_TEXT}${SPACE}.]`;
/**
 * A partner's own ID: 1-128 characters, no control characters, no leading or trailing whitespace, and not "."
 * or ".." (HTTP clients remove those path segments, so such an ID could never be addressed).
 */
export const EXTERNAL_ID_PATTERN = `^(?:${EDGE_NOT_DOT}|${EDGE_NOT_DOT}${EDGE}|\\.${EDGE_NOT_DOT}|${EDGE}[^${NOT_TEXT}]{1,126}${EDGE})$`;

/** A UUID in its textual form, any version (webhook delivery IDs). */
export const UUID_PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

/** A service ID of a listing or broker (bigint, as the public URLs show it). */
export const SERVICE_ID_PATTERN = "^[1-9][0-9]{0,17}$";
/** An office or organization ID: a positive PostgreSQL integer, 1 to 2147483647, without leading zeros. */
export const RECORD_ID_PATTERN =
  "^(?:[1-9][0-9]{0,8}|1[0-9]{9}|20[0-9]{8}|21[0-3][0-9]{7}|214[0-6][0-9]{6}|2147[0-3][0-9]{5}|21474[0-7][0-9]{4}|214748[0-2][0-9]{3}|2147483[0-5][0-9]{2}|21474836[0-3][0-9]|214748364[0-7])$";

const ALNUM = "[A-Za-z0-9]";
// Hyphens only between letters or digits, never two in a row: excludes "xn--" labels, whose punycode URL parsers may refuse.
const LABEL = `${ALNUM}+(?:-${ALNUM}+)*`;
// The last label starts with a letter, so a host name is never read as an IPv4 number ("0.999").
const TOP_LABEL = `[A-Za-z]${ALNUM}*(?:-${ALNUM}+)*`;
const OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
const IPV4 = `${OCTET}(?:\\.${OCTET}){3}`;
const H16 = "[0-9A-Fa-f]{1,4}";
const IPV6 = [
  `(?:${H16}:){7}${H16}`,
  `(?:${H16}:){1,7}:`,
  `(?:${H16}:){1,6}:${H16}`,
  `(?:${H16}:){1,5}(?::${H16}){1,2}`,
  `(?:${H16}:){1,4}(?::${H16}){1,3}`,
  `(?:${H16}:){1,3}(?::${H16}){1,4}`,
  `(?:${H16}:){1,2}(?::${H16}){1,5}`,
  `${H16}:(?::${H16}){1,6}`,
  `:(?::${H16}){1,7}`,
  "::",
  `(?:${H16}:){6}${IPV4}`,
  `::(?:${H16}:){0,5}${IPV4}`,
  `(?:${H16}:){1,3}:${IPV4}`,
].join("|");
const PORT = "(?:[0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])";
/**
 * An absolute http(s) URL: host name (ASCII; IDN in punycode is not accepted), IPv4 or [IPv6], optional port, then
 * any path, query and fragment without spaces or control characters. No user name or password.
 */
export const HTTP_URL_PATTERN = `^[Hh][Tt][Tt][Pp][Ss]?://(?:(?:${LABEL}\\.)*${TOP_LABEL}|${IPV4}|\\[(?:${IPV6})\\])(?::${PORT})?(?:[/?#][^\\u0000-\\u0020\\u007F-\\u009F]*)?$`;

/** An e-mail address: a local part without spaces, controls or "@\"(),:;<>[\]", then a domain of two or more labels. */
export const EMAIL_PATTERN = `^[^${NOT_TEXT}${SPACE}@"(),:;<>\\[\\\\\\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$`;

const TEXT_SINGLE = "[^\\u0000-\\u001F\\u007F]";
const TEXT_MULTI = "[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F]";
const VISIBLE = `[^\\u0000-\\u001F\\u007F${SPACE}]`;
/** Text with at least one character that is not whitespace (the text rules included): for fields the server trims. */
export const NON_BLANK_SINGLE_LINE_PATTERN = `^${TEXT_SINGLE}*${VISIBLE}${TEXT_SINGLE}*$`;
export const NON_BLANK_MULTILINE_PATTERN = `^${TEXT_MULTI}*${VISIBLE}${TEXT_MULTI}*$`;

/** Compiles one of the patterns above with the semantics JSON Schema gives it (code points, u flag). */
export const compilePattern = (pattern: string) => new RegExp(pattern, "u");
