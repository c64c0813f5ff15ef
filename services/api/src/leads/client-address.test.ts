import { describe, expect, test } from "bun:test";
import {
  addressBucket,
  clientAddress,
  isBroadRange,
  normalizeAddress,
  parseTrustedProxies,
  sitePrefix,
} from "./client-address.ts";

const server = (address: string | null) => ({
  requestIP: () => (address ? { address, family: "IPv4" as const, port: 1234 } : null),
});
const request = (xff?: string) => new Request("http://localhost/", { headers: xff ? { "x-forwarded-for": xff } : {} });
const trusting = (ranges: string) => parseTrustedProxies(ranges).proxies;

describe("clientAddress", () => {
  test("with no trusted proxy, the socket's peer is the client and X-Forwarded-For is ignored", () => {
    expect(clientAddress(request("203.0.113.9"), server("10.0.0.5"))).toBe("10.0.0.5");
    expect(clientAddress(request("203.0.113.9"), server("10.0.0.5"), trusting(""))).toBe("10.0.0.5");
  });

  test("a peer outside the trusted ranges is the client, whatever X-Forwarded-For it sends", () => {
    const proxies = trusting("10.0.0.0/8");
    expect(clientAddress(request("203.0.113.9"), server("198.51.100.4"), proxies)).toBe("198.51.100.4");
  });

  test("behind a trusted proxy: the right-most entry that is not a trusted proxy's, never the client-supplied ones", () => {
    const proxies = trusting("10.0.0.0/8, fd00::/8");
    expect(clientAddress(request("1.1.1.1, 198.51.100.7"), server("10.0.0.5"), proxies)).toBe("198.51.100.7");
    // Two trusted hops (a CDN's edge in 10/8, then the ingress): both skipped.
    expect(clientAddress(request("6.6.6.6, 198.51.100.7, 10.2.3.4"), server("10.0.0.5"), proxies)).toBe("198.51.100.7");
    expect(clientAddress(request("2001:db8::9, fd00::2"), server("::ffff:10.0.0.5"), proxies)).toBe("2001:db8::9");
    expect(clientAddress(request("198.51.100.7:51234"), server("10.0.0.5"), proxies)).toBe("198.51.100.7");
    expect(clientAddress(request("[2001:DB8::9]:443"), server("10.0.0.5"), proxies)).toBe("2001:db8::9");
  });

  test("a forwarded value that is not an address is ignored: the hop that wrote it is taken", () => {
    const proxies = trusting("10.0.0.0/8");
    for (const forged of ["unknown", "evil.example", " , ", "1.2.3.4.5", "<script>", "2001:db8::zz"])
      expect([forged, clientAddress(request(forged), server("10.0.0.5"), proxies)]).toEqual([forged, "10.0.0.5"]);
    expect(clientAddress(request("198.51.100.7, garbage, 10.9.9.9"), server("10.0.0.5"), proxies)).toBe("10.9.9.9");
    expect(clientAddress(request(), server("10.0.0.5"), proxies)).toBe("10.0.0.5");
  });

  test("without a socket (app.handle) the address is unknown", () => {
    expect(clientAddress(request(), null)).toBeNull();
  });
});

describe("parseTrustedProxies", () => {
  test("ranges and single addresses, IPv4 and IPv6; whatever is not one is a problem named in full", () => {
    const { proxies, problems } = parseTrustedProxies("10.0.0.0/8, 192.168.1.7 ,fd00::/8,::1");
    expect(problems).toEqual([]);
    expect(proxies.ranges).toEqual(["10.0.0.0/8", "192.168.1.7/32", "fd00::/8", "::1/128"]);
    expect(["10.255.0.1", "192.168.1.7", "fd12::1", "::1"].map((a) => proxies.trusts(a))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(["11.0.0.1", "192.168.1.8", "fe80::1", "2001:db8::1"].map((a) => proxies.trusts(a))).toEqual([
      false,
      false,
      false,
      false,
    ]);
    const bad = parseTrustedProxies("10.0.0.0/33,balancer,10.0.0.0/8/1,fd00::/129,10.0.0.1:80");
    expect(bad.problems).toHaveLength(5);
    expect(bad.problems[1]).toContain("'balancer' is not an address range");
    // IPv6 written with leading zeros is an address as any other; IPv4 mapped into IPv6 is to be written as IPv4.
    expect(parseTrustedProxies("FD00:0000::/8").proxies.ranges).toEqual(["fd00::/8"]);
    expect(parseTrustedProxies("::ffff:0:0/96,::ffff:10.0.0.0/104,fe80::1%eth0/128").problems).toHaveLength(3);
  });

  test("ranges that hold more of the internet than anyone's proxies are named as broad; private ranges and a CDN's are not", () => {
    // The compose file's and the chart's defaults, a CDN's widest ranges, single addresses: none is broad.
    const fine = parseTrustedProxies(
      "10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7,fe80::/10,104.16.0.0/12,2a06:98c0::/29,2001:db8::/16,127.0.0.1,::1",
    );
    expect(fine.problems).toEqual([]);
    expect(fine.broad).toEqual([]);
    // Everyone, half of IPv4, every IPv4 address through the mapped block, a sixteenth of IPv6's public space.
    const wide = parseTrustedProxies("0.0.0.0/0,128.0.0.0/1,8.0.0.0/7,::/0,::/8,::fffe:0:0/94,2000::/3,2400::/8");
    expect(wide.problems).toEqual([]);
    expect(wide.broad).toEqual([
      "0.0.0.0/0",
      "128.0.0.0/1",
      "8.0.0.0/7",
      "::/0",
      "::/8",
      "::fffe:0:0/94",
      "2000::/3",
      "2400::/8",
    ]);
    // What makes them broad is what they trust: any client's address.
    const everyone = wide.proxies;
    expect(["203.0.113.9", "198.51.100.7", "2001:db8::9"].every((a) => everyone.trusts(a))).toBe(true);
    expect(isBroadRange("64:ff9b::", 96)).toBe(false);
    expect(isBroadRange("fc00::", 6)).toBe(true);
  });
});

describe("normalizeAddress", () => {
  test("an address in one spelling; anything else is null", () => {
    expect(normalizeAddress("::ffff:198.51.100.7")).toBe("198.51.100.7");
    expect(normalizeAddress(" 2001:DB8::1%eth0 ")).toBe("2001:db8::1");
    expect(normalizeAddress("[::1]:8080")).toBe("::1");
    expect(normalizeAddress("198.51.100.7:80")).toBe("198.51.100.7");
    for (const bad of ["", "unknown", "_hidden", "999.1.1.1", "1.2.3", "::g", null])
      expect([bad, normalizeAddress(bad)]).toEqual([bad, null]);
  });

  test("an IPv4-mapped address is its IPv4 address in every notation, and an IPv6 address has one spelling", () => {
    // Before, only `::ffff:a.b.c.d` was mapped: every IPv4 client a proxy wrote in hex (or written out) shared one
    // bucket and one /48, so 20 inquiries blocked them all and the views cap counted 3 of them per listing a day.
    for (const written of [
      "::ffff:198.51.100.7",
      "::ffff:c633:6407",
      "::FFFF:C633:6407",
      "0:0:0:0:0:ffff:c633:6407",
      "0000:0000:0000:0000:0000:ffff:198.51.100.7",
      "[::ffff:c633:6407]:443",
    ])
      expect([written, normalizeAddress(written)]).toEqual([written, "198.51.100.7"]);
    for (const written of [
      "2001:db8:1:2::9",
      "2001:0DB8:0001:0002:0000:0000:0000:0009",
      "2001:db8:1:2:0:0:0:9",
      "2001:db8:1:2::0.0.0.9",
    ])
      expect([written, normalizeAddress(written)]).toEqual([written, "2001:db8:1:2::9"]);
    expect(normalizeAddress("0:0:0:0:0:0:0:1")).toBe("::1");
    expect(normalizeAddress("1:0:0:2:0:0:0:3")).toBe("1:0:0:2::3");
    expect(normalizeAddress("::")).toBe("::");
    // Two IPv4 clients in hex are two buckets, each its own address; neither is an IPv6 site.
    const [a, b] = [normalizeAddress("::ffff:c633:6407"), normalizeAddress("::ffff:c633:6408")];
    expect([addressBucket(a), addressBucket(b), sitePrefix(a)]).toEqual(["198.51.100.7", "198.51.100.8", null]);
  });

  test("a trusted proxy's hops are recognised, and the client read, in whichever notation they are written", () => {
    const proxies = trusting("10.0.0.0/8");
    expect(clientAddress(request("::ffff:c633:6407, ::ffff:a00:2"), server("::ffff:a00:1"), proxies)).toBe(
      "198.51.100.7",
    );
  });
});

describe("addressBucket", () => {
  test("IPv4 and IPv4-mapped IPv6 are one bucket per address", () => {
    expect(addressBucket("198.51.100.7")).toBe("198.51.100.7");
    expect(addressBucket("::ffff:198.51.100.7")).toBe("198.51.100.7");
  });

  test("IPv6 addresses of one /64 share a bucket, whatever their spelling", () => {
    const a = addressBucket("2001:db8:85a3:12::1");
    expect(a).toBe("2001:db8:85a3:12::/64");
    expect(addressBucket("2001:0DB8:85a3:0012:ffff:eeee:dddd:cccc")).toBe(a);
    expect(addressBucket("[2001:db8:85a3:12::9%eth0]")).toBe(a);
    expect(addressBucket("2001:db8:85a3:13::1")).not.toBe(a);
    expect(addressBucket("::1")).toBe("0:0:0:0::/64");
    expect(addressBucket("64:ff9b::192.0.2.1")).toBe("64:ff9b:0:0::/64");
  });

  test("no address is the 'unknown' bucket", () => {
    expect(addressBucket(null)).toBe("unknown");
  });
});

describe("sitePrefix", () => {
  test("an IPv6 address's /48, the same for every /64 in it; none for IPv4", () => {
    expect(sitePrefix("2001:db8:85a3:12::1")).toBe("2001:db8:85a3::/48");
    expect(sitePrefix("2001:0db8:85a3:ffff:1:2:3:4")).toBe("2001:db8:85a3::/48");
    expect(sitePrefix("2001:db8:85a4::1")).toBe("2001:db8:85a4::/48");
    expect(sitePrefix("198.51.100.7")).toBeNull();
    expect(sitePrefix("::ffff:198.51.100.7")).toBeNull();
    expect(sitePrefix(null)).toBeNull();
  });
});
