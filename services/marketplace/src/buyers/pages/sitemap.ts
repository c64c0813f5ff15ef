// sitemap.xml and robots.txt. The sitemap lists the public pages worth indexing: buyer-visible listings and
// public brokers (buyer-visibility.ts decides both), read from PostgreSQL so a listing leaves it the moment it
// is sold. Up to `pageSize` URLs it is one <urlset>; beyond, a <sitemapindex> of numbered sitemaps per kind
// (the protocol allows 50,000 URLs per file).
import type postgres from "postgres";
import { brokerVisibleToBuyers, listingVisibleToBuyers } from "../buyer-visibility.ts";
import { brokerUrl, listingUrl } from "../public-views.ts";
import { escapeHtml } from "./html.ts";

export const SITEMAP_MAX_URLS = 50_000;
const KINDS = ["listings", "brokers"] as const;
type Kind = (typeof KINDS)[number];

const XML_HEADERS = {
  "content-type": "application/xml; charset=utf-8",
  "x-content-type-options": "nosniff",
  "cache-control": "no-cache",
};

interface Entry {
  id: string;
  updatedAt: Date;
}

async function count(sql: postgres.Sql, kind: Kind): Promise<number> {
  const [row] =
    kind === "listings"
      ? await sql`SELECT count(*)::int AS n FROM listings l WHERE ${listingVisibleToBuyers(sql, "l")}`
      : await sql`SELECT count(*)::int AS n FROM brokers b WHERE ${brokerVisibleToBuyers(sql, "b")}`;
  return row!.n as number;
}

async function entries(sql: postgres.Sql, kind: Kind, offset: number, limit: number): Promise<Entry[]> {
  const rows =
    kind === "listings"
      ? await sql`SELECT l.id::text AS id, l.updated_at FROM listings l WHERE ${listingVisibleToBuyers(sql, "l")} ORDER BY l.id OFFSET ${offset} LIMIT ${limit}`
      : await sql`SELECT b.id::text AS id, b.updated_at FROM brokers b WHERE ${brokerVisibleToBuyers(sql, "b")} ORDER BY b.id OFFSET ${offset} LIMIT ${limit}`;
  return rows.map((r) => ({ id: r.id as string, updatedAt: r.updated_at as Date }));
}

function urlset(base: string, parts: { kind: Kind; entries: Entry[] }[]): string {
  const urls = parts.flatMap(({ kind, entries }) =>
    entries.map(
      (e) =>
        `<url><loc>${escapeHtml(kind === "listings" ? listingUrl(base, e.id) : brokerUrl(base, e.id))}</loc><lastmod>${e.updatedAt.toISOString()}</lastmod></url>`,
    ),
  );
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.join("\n")}\n</urlset>\n`;
}

const xml = (body: string, status = 200) => new Response(body, { status, headers: XML_HEADERS });

export interface SitemapDeps {
  sql: postgres.Sql;
  publicBaseUrl: string;
  /** URLs per sitemap file (default and maximum 50,000; smaller in tests). */
  pageSize?: number;
}

export function createSitemaps(deps: SitemapDeps) {
  const size = Math.min(deps.pageSize ?? SITEMAP_MAX_URLS, SITEMAP_MAX_URLS);
  const base = deps.publicBaseUrl;
  return {
    async index(): Promise<Response> {
      const [listings, brokers] = await Promise.all([count(deps.sql, "listings"), count(deps.sql, "brokers")]);
      if (listings + brokers <= size) {
        const [l, b] = await Promise.all([
          entries(deps.sql, "listings", 0, size),
          entries(deps.sql, "brokers", 0, size),
        ]);
        return xml(
          urlset(base, [
            { kind: "listings", entries: l },
            { kind: "brokers", entries: b },
          ]),
        );
      }
      const files = KINDS.flatMap((kind) =>
        Array.from(
          { length: Math.ceil((kind === "listings" ? listings : brokers) / size) },
          (_, i) => `${base}/sitemaps/${kind}-${i + 1}.xml`,
        ),
      );
      return xml(
        `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${files.map((f) => `<sitemap><loc>${escapeHtml(f)}</loc></sitemap>`).join("\n")}\n</sitemapindex>\n`,
      );
    },
    /** /sitemaps/listings-3.xml: the third page of listings; null for a name that is not one. */
    async file(name: string): Promise<Response | null> {
      const match = /^(listings|brokers)-([1-9]\d{0,5})\.xml$/.exec(name);
      if (!match) return null;
      const kind = match[1] as Kind;
      const pageNumber = Number(match[2]);
      const list = await entries(deps.sql, kind, (pageNumber - 1) * size, size);
      if (list.length === 0 && pageNumber > 1) return null;
      return xml(urlset(base, [{ kind, entries: list }]));
    },
  };
}

export function robotsTxt(publicBaseUrl: string): Response {
  const body = [
    "User-agent: *",
    "Allow: /",
    "Disallow: /v1/",
    "Disallow: /partner/",
    "Disallow: /docs",
    "Disallow: /listings/*/inquiry",
    `Sitemap: ${publicBaseUrl}/sitemap.xml`,
    "",
  ].join("\n");
  return new Response(body, {
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "public, max-age=3600" },
  });
}
