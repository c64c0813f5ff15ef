// Which service answers a path under the site's one address (PUBLIC_BASE_URL): the partner API takes the partner
// routes and its documentation, the marketplace everything buyers reach (pages, public JSON search and inquiries,
// sitemaps, previews, images). The balancers route by this rule: HAProxy (images/balancer/haproxy.cfg), the chart's
// Ingress (deploy/helm) and `npm start`'s local balancer (scripts/local-balancer.ts); test/docker/site-routing.test.ts
// holds each of them to it.

/** Path prefixes the partner API serves. */
export const PARTNER_API_PATH_PREFIXES = ["/partner/"] as const;
/** Exact paths the partner API serves (its documentation page). */
export const PARTNER_API_EXACT_PATHS = ["/docs"] as const;

/** Whether the partner API serves `path` (else the marketplace does). */
export function servedByPartnerApi(path: string): boolean {
  return (
    PARTNER_API_PATH_PREFIXES.some((prefix) => path.startsWith(prefix)) ||
    (PARTNER_API_EXACT_PATHS as readonly string[]).includes(path)
  );
}
