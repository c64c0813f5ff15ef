// Which service answers a path under the site's one address (PUBLIC_BASE_URL): the partner API takes the partner
// routes and its documentation, the partner portal /portal and everything under /portal/, the marketplace everything
// buyers reach (pages, public JSON search and inquiries, sitemaps, previews, images). The balancers route by this
// rule: HAProxy (images/balancer/haproxy.cfg), the chart's Ingress (deploy/helm) and `npm start`'s local balancer
// (scripts/local-balancer.ts); test/docker/site-routing.test.ts holds each of them to it.

/** Path prefixes the partner API serves. */
export const PARTNER_API_PATH_PREFIXES = ["/partner/"] as const;
/** Exact paths the partner API serves (its documentation page). */
export const PARTNER_API_EXACT_PATHS = ["/docs"] as const;
/** Path prefixes the partner portal serves. */
export const PORTAL_PATH_PREFIXES = ["/portal/"] as const;
/** Exact paths the partner portal serves (its address without the slash). */
export const PORTAL_EXACT_PATHS = ["/portal"] as const;

export type SiteService = "api" | "portal" | "marketplace";

const matches = (path: string, prefixes: readonly string[], exact: readonly string[]) =>
  prefixes.some((prefix) => path.startsWith(prefix)) || exact.includes(path);

/** Whether the partner API serves `path`. */
export function servedByPartnerApi(path: string): boolean {
  return matches(path, PARTNER_API_PATH_PREFIXES, PARTNER_API_EXACT_PATHS);
}

/** Whether the partner portal serves `path`. */
function servedByPortal(path: string): boolean {
  return matches(path, PORTAL_PATH_PREFIXES, PORTAL_EXACT_PATHS);
}

/** The service that answers `path`: the API's and the portal's paths, every other path the marketplace's. */
export function siteServiceOf(path: string): SiteService {
  if (servedByPartnerApi(path)) return "api";
  if (servedByPortal(path)) return "portal";
  return "marketplace";
}
