// Which resolved addresses an outbound request to a partner-supplied URL may reach: only public unicast. A
// partner's URL (an image to download, a webhook receiver) must never reach our own network, the cloud metadata
// service or anything else not on the internet. Shared by the media downloader and the webhooks sender
// (outbound-destination.ts resolves, vets and pins the address these functions judge).
import { isIP } from "node:net";

/** Host name as it is resolved: IPv6 literals lose their brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
}

export function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
}

function parseAllowEntry(entry: string): { host: string; port?: number } | null {
  const e = entry.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(e);
  if (bracketed) return { host: bracketed[1]!, port: bracketed[2] ? Number(bracketed[2]) : undefined };
  if (isIP(e) === 6) return { host: e };
  const plain = /^([^:]+)(?::(\d+))?$/.exec(e);
  return plain ? { host: plain[1]!, port: plain[2] ? Number(plain[2]) : undefined } : null;
}

/** `host` matches any port; `host:port` (or `[v6]:port`) only that port. */
export function isAllowlisted(url: URL, allowedHosts: readonly string[]): boolean {
  const host = hostOf(url);
  const port = portOf(url);
  return allowedHosts.some((entry) => {
    const allowed = parseAllowEntry(entry);
    return allowed !== null && allowed.host === host && (allowed.port === undefined || allowed.port === port);
  });
}

type V4Range = [base: number, bits: number];

const v4 = (dotted: string): number => dotted.split(".").reduce((acc, part) => acc * 256 + Number(part), 0);
const range = (cidr: string): V4Range => {
  const [base, bits] = cidr.split("/");
  return [v4(base!), Number(bits)];
};

// IANA special-purpose IPv4 blocks: nothing in them is a public image host.
const FORBIDDEN_V4: V4Range[] = [
  "0.0.0.0/8", // "this network"
  "10.0.0.0/8", // private
  "100.64.0.0/10", // carrier-grade NAT
  "127.0.0.0/8", // loopback
  "169.254.0.0/16", // link-local, including the cloud metadata service 169.254.169.254
  "172.16.0.0/12", // private
  "192.0.0.0/24", // IETF protocol assignments
  "192.0.2.0/24", // documentation
  "192.88.99.0/24", // 6to4 relay anycast
  "192.168.0.0/16", // private
  "198.18.0.0/15", // benchmarking
  "198.51.100.0/24", // documentation
  "203.0.113.0/24", // documentation
  "224.0.0.0/4", // multicast
  "240.0.0.0/4", // reserved, including broadcast
].map(range);

function inV4Range(ip: number, [base, bits]: V4Range): boolean {
  const size = 2 ** (32 - bits);
  return Math.floor(ip / size) === Math.floor(base / size);
}

function isForbiddenV4(ip: number): boolean {
  return FORBIDDEN_V4.some((r) => inV4Range(ip, r));
}

/** Eight 16-bit groups, or null when not an IPv6 literal. */
function parseV6(text: string): number[] | null {
  let s = text.split("%")[0]!; // zone index
  const groups: number[] = [];
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    if (isIP(tail[1]!) !== 4) return null;
    const n = v4(tail[1]!);
    s = `${s.slice(0, -tail[1]!.length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string) =>
    part === "" ? [] : part.split(":").map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN));
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? head.length !== 8 : missing < 1) return null;
  groups.push(...head, ...Array(halves.length === 2 ? missing : 0).fill(0), ...rest);
  return groups.some(Number.isNaN) ? null : groups;
}

function embeddedV4(g: number[], from: number): number {
  return g[from]! * 65536 + g[from + 1]!;
}

function isForbiddenV6(g: number[]): boolean {
  const zeroUntil = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroUntil(5) && g[5] === 0xffff) return isForbiddenV4(embeddedV4(g, 6)); // ::ffff:a.b.c.d (IPv4-mapped)
  if (zeroUntil(6)) return true; // ::, ::1 and the deprecated IPv4-compatible ::a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return isForbiddenV4(embeddedV4(g, 6)); // NAT64 64:ff9b::/96
  if (g[0] === 0x2002) return isForbiddenV4(embeddedV4(g, 1)); // 6to4 carries an IPv4 address
  const first = g[0]!;
  if ((first & 0xe000) !== 0x2000) return true; // outside global unicast 2000::/3: fc00::/7, fe80::/10, ff00::/8, 100::/64, ...
  if (first === 0x2001 && g[1]! < 0x0200) return true; // 2001::/23 IETF protocol assignments (Teredo, ORCHID, ...)
  if (first === 0x2001 && g[1] === 0x0db8) return true; // documentation
  if (first === 0x3fff && g[1]! < 0x1000) return true; // documentation 3fff::/20
  return false;
}

const LOOPBACK_V4 = range("127.0.0.0/8");
const THIS_NETWORK_V4 = range("0.0.0.0/8");
const isLocalV4 = (ip: number) => inV4Range(ip, LOOPBACK_V4) || inV4Range(ip, THIS_NETWORK_V4);

/**
 * True when the address reaches only this host: 127.0.0.0/8, 0.0.0.0/8 (the unspecified address), ::1, ::, and
 * those IPv4 addresses mapped (::ffff:a.b.c.d) or embedded (::a.b.c.d) in IPv6, in any notation (hex groups,
 * dotted tail, compressed or written out). Not an IP address at all: false.
 */
export function isLocalOnlyAddress(address: string): boolean {
  const family = isIP(address.split("%")[0]!);
  if (family === 4) return isLocalV4(v4(address));
  if (family !== 6) return false;
  const g = parseV6(address);
  if (g === null) return false;
  const zeroUntil = (n: number) => g.slice(0, n).every((x) => x === 0);
  // ::ffff:a.b.c.d, and ::, ::1 and ::a.b.c.d (0.0.0.0 and 0.0.0.1 are in 0.0.0.0/8).
  return ((zeroUntil(5) && g[5] === 0xffff) || zeroUntil(6)) && isLocalV4(embeddedV4(g, 6));
}

/** True when the address is anything but public unicast (or not an IP address at all). */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address.split("%")[0]!);
  if (family === 4) return isForbiddenV4(v4(address));
  if (family === 6) {
    const groups = parseV6(address);
    return groups === null || isForbiddenV6(groups);
  }
  return true;
}
