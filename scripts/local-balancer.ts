// `npm start`'s stand-in for the deployment's balancer: one address (API_PORT, 8080) for the partner API, the partner
// portal and the marketplace, routed by the rule every balancer follows (@pss/contracts site-routing.ts). Like HAProxy it is the edge:
// the client's own X-Forwarded-For is dropped and the address it connected from is sent, which the services believe
// (TRUST_PROXY_CIDRS=127.0.0.1/32,::1 in npm start). It re-sends nothing and holds no state: a service that is
// restarting answers 502 in the services' JSON error shape until it is back.
import { siteServiceOf, type SiteService } from "@pss/contracts";

export interface LocalBalancerOptions {
  port: number;
  hostname?: string;
  apiUrl: string;
  marketplaceUrl: string;
  /** Absent: no portal runs, and its paths answer 502 like a service that is down. */
  portalUrl?: string;
}

/** Hop-by-hop headers (RFC 9110 section 7.6.1) are the connection's, not the request's. */
const HOP_BY_HOP = ["connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade", "x-forwarded-for"];

const unavailable = () =>
  Response.json(
    { status: "error", error: "The service is temporarily unavailable; please retry shortly" },
    { status: 502, headers: { "retry-after": "1" } },
  );

export function startLocalBalancer(opts: LocalBalancerOptions) {
  const targets: Record<SiteService, string | undefined> = {
    api: opts.apiUrl,
    portal: opts.portalUrl,
    marketplace: opts.marketplaceUrl,
  };
  return Bun.serve({
    port: opts.port,
    hostname: opts.hostname ?? "127.0.0.1",
    // The services answer 413 in JSON, reading the body themselves.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    async fetch(request, server) {
      const url = new URL(request.url);
      const target = targets[siteServiceOf(url.pathname)];
      if (target === undefined) return unavailable();
      const headers = new Headers(request.headers);
      for (const name of HOP_BY_HOP) headers.delete(name);
      const client = server.requestIP(request)?.address;
      if (client) headers.set("x-forwarded-for", client);
      try {
        return await fetch(`${target}${url.pathname}${url.search}`, {
          method: request.method,
          headers,
          body: request.body,
          redirect: "manual",
          // Bun sends a streamed body as it comes; the services read it with their own limits.
          duplex: "half",
        } as RequestInit);
      } catch {
        return unavailable();
      }
    },
  });
}
