// Server-rendered pages without a framework: a tagged template that escapes every interpolated value, so
// partner text can never become markup. Markup is only what is written literally here or passed as raw().
const RAW = Symbol("raw");
export interface Raw {
  [RAW]: string;
}

export const raw = (markup: string): Raw => ({ [RAW]: markup });

export function escapeHtml(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

type Value = string | number | null | undefined | false | Raw | Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return "";
  if (Array.isArray(value)) return value.map(render).join("");
  if (typeof value === "object") return value[RAW];
  return escapeHtml(String(value));
}

/** html`<p>${text}</p>`: values are escaped, nested html`` and raw() are kept. */
export function html(strings: TemplateStringsArray, ...values: Value[]): Raw {
  let out = strings[0]!;
  values.forEach((v, i) => (out += render(v) + strings[i + 1]!));
  return raw(out);
}

export interface PageMeta {
  title: string;
  description: string;
  canonicalUrl: string;
  imageUrl?: string | null;
  imageAlt?: string;
  type?: "website" | "profile";
  noIndex?: boolean;
}

const STYLE = `
  :root { color-scheme: light; --ink: #1d2733; --muted: #566270; --line: #d9dee4; --accent: #0b5cad; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f6f7f9; }
  main { max-width: 60rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; background: #fff; min-height: 100vh; }
  h1 { font-size: 1.8rem; line-height: 1.25; margin: 0 0 .5rem; }
  h2 { font-size: 1.2rem; margin: 2rem 0 .6rem; border-bottom: 1px solid var(--line); padding-bottom: .3rem; }
  a { color: var(--accent); }
  .muted { color: var(--muted); }
  .badge { display: inline-block; padding: .2rem .65rem; border-radius: 999px; background: #b3261e; color: #fff; font-weight: 600; font-size: .85rem; letter-spacing: .02em; }
  .price { font-size: 1.5rem; font-weight: 700; margin: .5rem 0; }
  .photos { display: grid; grid-template-columns: repeat(auto-fill, minmax(14rem, 1fr)); gap: .5rem; list-style: none; padding: 0; margin: 1rem 0; }
  .photos img, .cards img { width: 100%; height: auto; border-radius: .4rem; display: block; }
  dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1.2rem; margin: 0; }
  dl.facts dt { color: var(--muted); }
  dl.facts dd { margin: 0; }
  .broker { display: flex; gap: 1rem; align-items: center; }
  .avatar { width: 96px; height: 96px; border-radius: 50%; object-fit: cover; }
  .cards { list-style: none; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); gap: 1rem; }
  .cards li { border: 1px solid var(--line); border-radius: .5rem; padding: .75rem; }
  .cards h3 { font-size: 1.05rem; margin: .5rem 0 .25rem; }
  .description p { margin: 0 0 1rem; white-space: pre-line; }
`;

export function page(meta: PageMeta, body: Raw, status = 200): Response {
  const document = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${meta.title}</title>
<meta name="description" content="${meta.description}">
${meta.noIndex ? raw(`<meta name="robots" content="noindex">`) : html`<link rel="canonical" href="${meta.canonicalUrl}">`}
<meta property="og:type" content="${meta.type ?? "website"}">
<meta property="og:title" content="${meta.title}">
<meta property="og:description" content="${meta.description}">
<meta property="og:url" content="${meta.canonicalUrl}">
${meta.imageUrl ? html`<meta property="og:image" content="${meta.imageUrl}">
<meta property="og:image:alt" content="${meta.imageAlt ?? meta.title}">
<meta name="twitter:card" content="summary_large_image">` : raw(`<meta name="twitter:card" content="summary">`)}
<style>${raw(STYLE)}</style>
</head>
<body>
<main id="content">
${body}
</main>
</body>
</html>
`;
  return new Response(document[RAW], {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      // No scripts at all; images from anywhere https (the media host may differ from the page's).
      "content-security-policy": "default-src 'none'; img-src 'self' https: http: data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
      "x-content-type-options": "nosniff",
      "referrer-policy": "strict-origin-when-cross-origin",
      "cache-control": "no-cache",
    },
  });
}

export function notFoundPage(what: string, canonicalUrl: string): Response {
  return page(
    { title: `${what} not found`, description: `This ${what.toLowerCase()} is not available.`, canonicalUrl, noIndex: true },
    html`<h1>${what} not found</h1>
<p>This ${what.toLowerCase()} does not exist or is no longer on the market.</p>`,
    404,
  );
}

const money = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", maximumFractionDigits: 0 });
export const formatMoney = (n: number) => money.format(n);

/** Variants → src/srcset; JPEG for the widest reach, WebP offered first through <picture>. */
export function picture(image: { width: number | null; height: number | null; variants: { width: number; format: string; url: string }[] }, alt: string, opts: { sizes: string; className?: string; eager?: boolean }): Raw {
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
