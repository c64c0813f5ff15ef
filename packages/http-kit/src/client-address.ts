// Who is asking, for the abuse limits on public lead intake and the buyer statistics' visitor cap.
import { BlockList, isIP } from "node:net";
import type { Server } from "bun";
import { type EnvReader, refuseUnlessUnderstood } from "@pss/service-kit";

/**
 * The proxies whose X-Forwarded-For the API believes (TRUST_PROXY_CIDRS; docs/operations.md, "Trusted proxies"):
 * address ranges. Empty: none, the socket's peer is the client.
 */
export interface TrustedProxies {
  /** Whether an address (as normalizeAddress returns it) is one of the trusted proxies'. */
  trusts(address: string): boolean;
  readonly ranges: readonly string[];
}

export const NO_TRUSTED_PROXIES: TrustedProxies = { trusts: () => false, ranges: [] };

/**
 * An address as text, checked and in one spelling: IPv4 (also when IPv4-mapped, in any notation: `::ffff:1.2.3.4`,
 * `::ffff:102:304`, written out; or with a :port), IPv6 in its canonical compressed form (brackets, :port and a
 * %zone removed, lower case, leading zeros dropped); null when the text is not an address (a hostname, "unknown",
 * garbage). One address, one spelling: otherwise the buckets, the views cap and the trusted ranges would see one
 * client as several, or every IPv4 client written one way as one.
 */
export function normalizeAddress(text: string | null | undefined): string | null {
  if (!text) return null;
  let t = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(t);
  if (bracketed) t = bracketed[1]!;
  else if (/^\d{1,3}(?:\.\d{1,3}){3}:\d{1,5}$/.test(t)) t = t.slice(0, t.lastIndexOf(":"));
  t = t.replace(/%.*$/, "").toLowerCase();
  const family = isIP(t);
  if (family === 4) return t;
  if (family !== 6) return null;
  const groups = ipv6Groups(t);
  if (!groups) return null;
  // ::ffff:a.b.c.d, however written, is the IPv4 address a.b.c.d.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff)
    return [groups[6]! >> 8, groups[6]! & 255, groups[7]! >> 8, groups[7]! & 255].join(".");
  return compressIpv6(groups);
}

/** The eight 16-bit groups of an IPv6 address (isIP said it is one), an embedded IPv4 tail included. */
function ipv6Groups(address: string): number[] | null {
  const halves = address.split("::");
  const parse = (part: string | undefined) =>
    (part ? part.split(":") : []).flatMap((g) => {
      if (!g.includes(".")) return [parseInt(g, 16)];
      const [a, b, c, d] = g.split(".").map(Number) as [number, number, number, number];
      return [(a << 8) | b, (c << 8) | d];
    });
  const left = parse(halves[0]);
  const right = parse(halves[1]);
  const missing = 8 - left.length - right.length;
  if (halves.length > 2 || (halves.length === 1 ? missing !== 0 : missing < 1)) return null;
  const all = [...left, ...Array<number>(halves.length === 2 ? missing : 0).fill(0), ...right];
  return all.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? all : null;
}

/** RFC 5952's text: lower case, no leading zeros, the longest run of two or more zero groups (the first) as "::". */
function compressIpv6(groups: number[]): string {
  let best = { at: -1, length: 1 };
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.length) best = { at: i, length: j - i };
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.at < 0) return hex.join(":");
  return `${hex.slice(0, best.at).join(":")}::${hex.slice(best.at + best.length).join(":")}`;
}

/**
 * Whether a trusted range holds more of the internet than any operator's proxies do, so that any client could name
 * its own address: IPv4 wider than /8; an IPv6 range holding the IPv4-mapped block (::ffff:0:0/96: every IPv4
 * client, as the check of an IPv4 peer against IPv6 ranges maps it); IPv6 wider than /16 outside the private and
 * link-local blocks (fc00::/7, fe80::/10). Private ranges such as 10.0.0.0/8 and fc00::/7 are not broad; nor is a
 * CDN's (its widest published ranges are /12 to /13 and /29).
 */
export function isBroadRange(address: string, prefix: number): boolean {
  if (isIP(address) === 4) return prefix < 8;
  const groups = ipv6Groups(address);
  if (!groups) return false;
  const value = groups.reduce((n, g) => (n << 16n) | BigInt(g), 0n);
  const within = (net: bigint, bits: number, of: bigint = value) =>
    bits === 0 || of >> BigInt(128 - bits) === net >> BigInt(128 - bits);
  if (prefix <= 96 && within(value, prefix, 0xffffn << 32n)) return true;
  const privateBlock = (net: bigint, bits: number) => prefix >= bits && within(net, bits);
  return prefix < 16 && !privateBlock(0xfcn << 120n, 7) && !privateBlock(0xfe8n << 116n, 10);
}

/**
 * TRUST_PROXY_CIDRS: comma-separated ranges (10.0.0.0/8, fd00::/8) or single addresses; the problems, if any, and
 * the ranges too broad to be anyone's proxies (isBroadRange: production refuses them unless told otherwise).
 */
export function parseTrustedProxies(text: string): { proxies: TrustedProxies; problems: string[]; broad: string[] } {
  const list = new BlockList();
  const ranges: string[] = [];
  const problems: string[] = [];
  const broad: string[] = [];
  for (const item of text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [addressText, prefixText, extra] = item.split("/");
    const address = normalizeAddress(addressText);
    const family = address === null ? 0 : isIP(address);
    const max = family === 4 ? 32 : 128;
    const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN;
    if (
      !address ||
      extra !== undefined ||
      !(prefix >= 0 && prefix <= max) ||
      // Written as an address of its family, nothing more (no port, brackets or zone; no IPv4 mapped into IPv6).
      isIP(addressText!.trim()) !== family ||
      addressText!.includes("%")
    ) {
      problems.push(
        `'${item.slice(0, 60)}' is not an address range (write e.g. 10.0.0.0/8, 172.16.0.0/12, fd00::/8 or 10.1.2.3)`,
      );
      continue;
    }
    list.addSubnet(address, prefix, family === 4 ? "ipv4" : "ipv6");
    ranges.push(`${address}/${prefix}`);
    if (isBroadRange(address, prefix)) broad.push(`${address}/${prefix}`);
  }
  if (ranges.length === 0) return { proxies: NO_TRUSTED_PROXIES, problems, broad };
  return {
    proxies: { ranges, trusts: (a) => list.check(a, isIP(a) === 4 ? "ipv4" : "ipv6") },
    problems,
    broad,
  };
}

/**
 * TRUST_PROXY_CIDRS as a service reads it (the API and the portal): its problems reported, and a range as wide as
 * the internet refused under production unless TRUST_PROXY_CIDRS_I_UNDERSTAND=true, since trusting (nearly)
 * everyone is the old TRUST_PROXY=true again: any client names its own address. `countedPerClient` says what
 * would then stop counting per client.
 */
export function readTrustedProxiesSetting(r: EnvReader, countedPerClient: string): TrustedProxies {
  const { proxies, problems, broad } = parseTrustedProxies(r.string("TRUST_PROXY_CIDRS", ""));
  for (const p of problems) r.problem(`TRUST_PROXY_CIDRS: ${p}`);
  if (broad.length > 0)
    refuseUnlessUnderstood(
      r,
      "TRUST_PROXY_CIDRS",
      broad.join(","),
      `trusts more of the internet than any proxies of yours: any client's own X-Forwarded-For would be believed, so ${countedPerClient} no longer count per client`,
    );
  return proxies;
}

/**
 * The client's address. The socket's peer, unless that peer is a trusted proxy: then X-Forwarded-For is read from
 * the right (each proxy appends the address it saw), skipping the entries of trusted proxies, and the first entry
 * that is not one is the client. Entries to its left were written by the client and are never believed. An entry
 * that is not an address ends the walk: the hop that wrote it (the last trusted one) is taken. No header, or only
 * trusted entries: the left-most trusted hop.
 */
export function clientAddress(
  request: Request,
  server: Pick<Server<unknown>, "requestIP"> | null,
  trusted: TrustedProxies = NO_TRUSTED_PROXIES,
): string | null {
  const peerText = server?.requestIP(request)?.address;
  const peer = normalizeAddress(peerText) ?? peerText ?? null;
  if (peer === null || !trusted.trusts(peer)) return peer;
  const header = request.headers.get("x-forwarded-for");
  if (!header) return peer;
  const hops = header.split(",");
  let client = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalizeAddress(hops[i]);
    if (hop === null) break;
    client = hop;
    if (!trusted.trusts(hop)) break;
  }
  return client;
}

/**
 * The rate-limit bucket of an address: IPv4 as is (also when IPv4-mapped), IPv6 by its /64 prefix, since one
 * subscriber usually holds a whole /64 and could otherwise rotate addresses to escape the limit.
 */
export function addressBucket(address: string | null): string {
  if (!address) return "unknown";
  const plain = address
    .replace(/^\[|\]$/g, "")
    .replace(/%.*$/, "")
    .toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(plain);
  if (mapped) return mapped[1]!;
  if (!plain.includes(":")) return plain;
  return ipv6Prefix(plain, 4) ?? plain;
}

/**
 * The /48 an IPv6 address is in (a site's usual allocation: 65,536 /64s), as "a:b:c::/48"; null for IPv4 and for
 * what is not an address. The buyer statistics cap the visitors of one /48 as well as those of one /64.
 */
export function sitePrefix(address: string | null): string | null {
  const bucket = addressBucket(address);
  return bucket.endsWith("::/64") ? ipv6Prefix(bucket.slice(0, -3), 3) : null;
}

function ipv6Prefix(address: string, groups: 3 | 4): string | null {
  const all = expandIpv6(address);
  return all ? `${all.slice(0, groups).join(":")}::/${groups * 16}` : null;
}

function expandIpv6(address: string): string[] | null {
  const halves = address.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string | undefined) => (part ? part.split(":") : []);
  const left = parse(halves[0]);
  const right = parse(halves[1]);
  // An embedded IPv4 tail (e.g. 64:ff9b::192.0.2.1) takes the room of two groups.
  const tailGroups = (list: string[]) => list.reduce((n, g) => n + (g.includes(".") ? 2 : 1), 0);
  const missing = 8 - tailGroups(left) - tailGroups(right);
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...left, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...right];
  if (!all.slice(0, 4).every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  return all.map((g) => (g.includes(".") ? g : parseInt(g, 16).toString(16)));
}
