export { escapeHtml, html, jsonForScript, raw, renderToString, type Raw, type HtmlValue } from "./html.ts";
export { isSameSiteForm } from "./form-origin.ts";
