// The buyers' page frame and picture helpers. The escaping template itself is @pss/html's (shared with the partner
// portal): partner text can never become markup; markup is only what is written literally or passed as raw().
import { html, jsonForScript, raw, renderToString, type Raw } from "@pss/html";
import { STYLE } from "./style.ts";

export { escapeHtml, html, jsonForScript, raw, renderToString, type Raw } from "@pss/html";

export const SITE_NAME = "Business Marketplace";

export interface PageMeta {
  title: string;
  description: string;
  canonicalUrl: string;
  imageUrl?: string | null;
  imageAlt?: string;
  type?: "website" | "profile" | "product";
  /** Keep the page out of search engines (error pages, searches with words, the confirmation page). */
  noIndex?: boolean;
  /** schema.org data, written as a JSON-LD data block (never executed, see jsonForScript). */
  jsonLd?: unknown;
}

/**
 * No scripts at all: `default-src 'none'` covers script-src. A JSON-LD block is a data block, which browsers
 * never execute, so CSP does not apply to it (the browser test checks no violation is reported). Images from
 * anywhere http(s) (the media host may differ from the page's); forms post only to this origin.
 */
export const PAGE_CSP =
  "default-src 'none'; img-src 'self' https: http: data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": PAGE_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "strict-origin-when-cross-origin",
  // Status changes (SOLD, UNDER_CONTRACT) show at once.
  "cache-control": "no-cache",
} as const;

export function page(meta: PageMeta, body: Raw, status = 200, headers: Record<string, string> = {}): Response {
  const document = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${meta.title}</title>
<meta name="description" content="${meta.description}">
${meta.noIndex ? raw(`<meta name="robots" content="noindex">`) : html`<link rel="canonical" href="${meta.canonicalUrl}">`}
<meta property="og:site_name" content="${SITE_NAME}">
<meta property="og:type" content="${meta.type ?? "website"}">
<meta property="og:title" content="${meta.title}">
<meta property="og:description" content="${meta.description}">
<meta property="og:url" content="${meta.canonicalUrl}">
${
  meta.imageUrl
    ? html`<meta property="og:image" content="${meta.imageUrl}">
<meta property="og:image:alt" content="${meta.imageAlt ?? meta.title}">
<meta name="twitter:card" content="summary_large_image">`
    : raw(`<meta name="twitter:card" content="summary">`)
}
${meta.jsonLd === undefined ? "" : html`<script type="application/ld+json">${raw(jsonForScript(meta.jsonLd))}</script>`}
<style>${raw(STYLE)}</style>
</head>
<body>
<a class="skip" href="#content">Skip to content</a>
<header class="site"><div class="bar"><a class="brand" href="/">${SITE_NAME}</a>
<nav aria-label="Site"><ul><li><a href="/listings">Businesses for sale</a></li></ul></nav></div></header>
<main id="content">
${body}
</main>
<footer class="site"><div class="bar"><p>Businesses for sale, listed by their brokers. Inquiries go to the listing's broker.</p></div></footer>
</body>
</html>
`;
  return new Response(renderToString(document), { status, headers: { ...PAGE_HEADERS, ...headers } });
}

/** Whether a request for a path that does not exist came from a browser (it gets an HTML page, not JSON). */
export function wantsHtml(request: Request): boolean {
  return /\btext\/html\b/i.test(request.headers.get("accept") ?? "");
}

const money = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", maximumFractionDigits: 0 });
export const formatMoney = (n: number) => money.format(n);

/** Variants → src/srcset; JPEG for the widest reach, WebP offered first through <picture>. */
export function picture(
  image: { width: number | null; height: number | null; variants: { width: number; format: string; url: string }[] },
  alt: string,
  opts: { sizes: string; className?: string; eager?: boolean },
): Raw {
  const jpg = image.variants.filter((v) => v.format === "jpg" || v.format === "jpeg").sort((a, b) => a.width - b.width);
  const webp = image.variants.filter((v) => v.format === "webp").sort((a, b) => a.width - b.width);
  const fallback = jpg.length ? jpg : webp;
  if (fallback.length === 0) return raw("");
  const srcset = (list: typeof jpg) => list.map((v) => `${v.url} ${v.width}w`).join(", ");
  const src = fallback.find((v) => v.width >= 800) ?? fallback.at(-1)!;
  return html`<picture>${webp.length && jpg.length ? html`<source type="image/webp" srcset="${srcset(webp)}" sizes="${opts.sizes}">` : ""}<img src="${src.url}" srcset="${srcset(fallback)}" sizes="${opts.sizes}" alt="${alt}"${image.width && image.height ? html` width="${image.width}" height="${image.height}"` : ""}${opts.className ? html` class="${opts.className}"` : ""} loading="${opts.eager ? "eager" : "lazy"}" decoding="async"></picture>`;
}

/** An image URL for link previews: a JPEG around 1200 px wide when there is one. */
export function shareImageUrl(variants: { width: number; format: string; url: string }[]): string | null {
  const jpg = variants.filter((v) => v.format === "jpg" || v.format === "jpeg").sort((a, b) => a.width - b.width);
  const list = jpg.length ? jpg : [...variants].sort((a, b) => a.width - b.width);
  return (list.find((v) => v.width >= 1200) ?? list.at(-1))?.url ?? null;
}

/** The largest variant (JPEG preferred): what a photo links to for a closer look. */
export function largestImageUrl(variants: { width: number; format: string; url: string }[]): string | null {
  const jpg = variants.filter((v) => v.format === "jpg" || v.format === "jpeg");
  const list = (jpg.length ? jpg : variants).slice().sort((a, b) => a.width - b.width);
  return list.at(-1)?.url ?? null;
}

/** "City, ST" as the listing's visibility allows (the city is absent when hidden). */
export function placeOf(location: { city?: string; state: string }): string {
  return [location.city, location.state].filter(Boolean).join(", ");
}

/** A listing's name on cards and pages: its title, or what it is. */
export const headlineOf = (l: { title: string | null; businessType: string }) =>
  l.title ?? `${l.businessType} for sale`;
