// Where an outbound request to a partner-supplied URL may connect: the host is resolved once, every answer is
// vetted with the address policy (address-policy.ts), and the one vetted address is handed to node:http as its
// lookup, so the connection goes exactly where was checked; no second DNS lookup that an attacker's name server
// could answer differently. Used by the media downloader (each redirect hop) and the webhooks sender.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { hostOf, isAllowlisted, isForbiddenAddress } from "./address-policy.ts";

export type Resolver = (host: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  );

/** The destination may not be contacted: its name has no address, or an address is not public unicast. */
export class DestinationRefused extends Error {
  constructor(readonly reason: "host not found" | "address not allowed") {
    super(reason);
    this.name = "DestinationRefused";
  }
}

/**
 * The one address a request to `url` may connect to. Every answer must pass, so a name with one public and one
 * private record cannot be steered inward; `allowedHosts` (`host`, `host:port`, `[v6]:port`) are exempt (test
 * receivers on loopback). DNS errors are passed on unchanged for the caller to classify.
 */
export async function vetDestination(
  url: URL,
  opts: { allowedHosts: readonly string[]; resolve?: Resolver },
): Promise<LookupAddress> {
  const host = hostOf(url);
  const family = isIP(host);
  const addresses = family ? [{ address: host, family }] : await (opts.resolve ?? systemResolver)(host);
  if (addresses.length === 0) throw new DestinationRefused("host not found");
  if (!isAllowlisted(url, opts.allowedHosts) && addresses.some((a) => isForbiddenAddress(a.address)))
    throw new DestinationRefused("address not allowed");
  return addresses[0]!;
}

/** A `lookup` option for node:http(s) that answers with the vetted address only (Host header and TLS name stay the URL's). */
export function pinnedLookup(target: LookupAddress) {
  return ((_host: string, options: { all?: boolean } | undefined, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [target]);
    else callback(null, target.address, target.family);
  }) as LookupFunction;
}
