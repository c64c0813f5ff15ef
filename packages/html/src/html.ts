// Server-rendered pages without a framework: a tagged template that escapes every interpolated value, so
// partner text can never become markup. Markup is only what is written literally or passed as raw().
const RAW = Symbol("raw");
export interface Raw {
  [RAW]: string;
}

export const raw = (markup: string): Raw => ({ [RAW]: markup });

export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

export type HtmlValue = string | number | null | undefined | false | Raw | HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return "";
  if (Array.isArray(value)) return value.map(render).join("");
  if (typeof value === "object") return value[RAW];
  return escapeHtml(String(value));
}

/** html`<p>${text}</p>`: values are escaped, nested html`` and raw() are kept. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Raw {
  let out = strings[0] ?? "";
  values.forEach((v, i) => (out += render(v) + (strings[i + 1] ?? "")));
  return raw(out);
}

/** The markup a template produced. */
export const renderToString = (markup: Raw): string => markup[RAW];

/**
 * JSON inside <script type="application/ld+json">: a "</script>" (or "<!--") in partner text must not end the
 * element, so <, > and & are written as \u escapes (still the same JSON), as are U+2028/U+2029.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}
