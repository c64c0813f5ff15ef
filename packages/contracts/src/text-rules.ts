// What a string in a JSON body may contain. PostgreSQL cannot store U+0000, a lone UTF-16 surrogate cannot be
// encoded as UTF-8, and other control characters only ever arrive by mistake or attack: every string in every
// body (object keys too) is checked once at the HTTP edge. Tab, LF and CR are allowed in multi-line fields only.

/** Fields whose text may span lines (listing description, broker bio, a buyer's message). */
export const MULTILINE_TEXT_FIELDS: ReadonlySet<string> = new Set(["description", "bio", "message"]);

/**
 * The same rules as regular expressions, for the OpenAPI document (valid in JS with the u flag, Python and Rust).
 * Lone surrogates are left out: Rust's and Python's engines cannot name them (Schemathesis drops such a pattern),
 * and the document states the rule in words.
 */
export const SINGLE_LINE_TEXT_PATTERN = "^[^\\u0000-\\u001F\\u007F]*$";
export const MULTILINE_TEXT_PATTERN = "^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F]*$";

/** Deepest nesting of arrays and objects a body may have; the deepest valid body needs 4. */
export const MAX_JSON_DEPTH = 16;

// Any control character or surrogate code unit: strings without one (nearly all) need no closer look.
// eslint-disable-next-line no-control-regex
const SUSPICIOUS = /[\u0000-\u001f\u007f\ud800-\udfff]/;

/** Why `value` is not acceptable text, or null when it is. */
export function textProblem(value: string, multiline: boolean): string | null {
  if (!SUSPICIOUS.test(value)) return null;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return "contains an unpaired UTF-16 surrogate";
    }
    if (c >= 0xdc00 && c <= 0xdfff) return "contains an unpaired UTF-16 surrogate";
    if (c < 0x20 || c === 0x7f) {
      if (multiline && (c === 0x09 || c === 0x0a || c === 0x0d)) continue;
      return `must not contain control characters (found U+${c.toString(16).toUpperCase().padStart(4, "0")}${multiline ? "" : "; tabs and line breaks are allowed only in multi-line fields"})`;
    }
  }
  return null;
}

/** The first string (value or key) in a parsed JSON body that breaks the text rules, with its field path. */
export function findTextProblem(value: unknown, path = ""): { path: string; message: string } | null {
  if (typeof value === "string") {
    const message = textProblem(value, MULTILINE_TEXT_FIELDS.has(path.slice(path.lastIndexOf(".") + 1)));
    return message ? { path, message } : null;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!mayHoldProblem(value[i])) continue;
      const found = findTextProblem(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    const object = value as Record<string, unknown>;
    for (const key of Object.keys(object)) {
      const keyProblem = textProblem(key, false);
      if (keyProblem) return { path: path ? `${path} (a field name)` : "(a field name)", message: keyProblem };
      if (!mayHoldProblem(object[key])) continue;
      const found = findTextProblem(object[key], path ? `${path}.${key}` : key);
      if (found) return found;
    }
  }
  return null;
}

/**
 * Whether a member needs a closer look: a string with a suspicious character, or a nested value. This runs on
 * every write's body, so clean strings (nearly all) cost one test and no field path is spelled out for them.
 */
function mayHoldProblem(value: unknown): boolean {
  return typeof value === "string" ? SUSPICIOUS.test(value) : value !== null && typeof value === "object";
}

/**
 * Nesting depth of a JSON text, measured without parsing it, so a hostile body cannot exhaust the stack of
 * the parser or of validation. Stops counting as soon as `limit` is exceeded.
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: jump to its closing quote (one not escaped by an odd run of backslashes).
      let end = i;
      for (;;) {
        end = text.indexOf('"', end + 1);
        if (end === -1) return false; // unterminated: the parser refuses it
        let backslashes = 0;
        while (text.charCodeAt(end - 1 - backslashes) === 0x5c) backslashes++;
        if (backslashes % 2 === 0) break;
      }
      i = end;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
