// Who is asking, for the abuse limits on public lead intake.
import type { Server } from "bun";

/**
 * The client's address. Behind a load balancer the socket only shows the balancer, so with trustProxy the
 * right-most X-Forwarded-For entry is used: the one our own (single, trusted) proxy appended. Entries to its
 * left come from the client and are never trusted. Without trustProxy the header is ignored entirely.
 */
export function clientAddress(
  request: Request,
  server: Pick<Server<unknown>, "requestIP"> | null,
  trustProxy: boolean,
): string | null {
  if (trustProxy) {
    const hops = request.headers
      .get("x-forwarded-for")
      ?.split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const last = hops?.at(-1);
    if (last) return last;
  }
  return server?.requestIP(request)?.address ?? null;
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
  const groups = expandIpv6(plain);
  return groups ? `${groups.slice(0, 4).join(":")}::/64` : plain;
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
