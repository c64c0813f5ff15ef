import { describe, expect, test } from "bun:test";
import { addressBucket, clientAddress } from "./client-address.ts";

const server = (address: string | null) => ({
  requestIP: () => (address ? { address, family: "IPv4" as const, port: 1234 } : null),
});
const request = (xff?: string) => new Request("http://localhost/", { headers: xff ? { "x-forwarded-for": xff } : {} });

describe("clientAddress", () => {
  test("uses the socket address and ignores X-Forwarded-For unless the proxy is trusted", () => {
    expect(clientAddress(request("203.0.113.9"), server("10.0.0.5"), false)).toBe("10.0.0.5");
  });

  test("behind a trusted proxy takes the right-most X-Forwarded-For entry, not the client-supplied ones", () => {
    expect(clientAddress(request("1.1.1.1, 198.51.100.7"), server("10.0.0.5"), true)).toBe("198.51.100.7");
    expect(clientAddress(request(" , "), server("10.0.0.5"), true)).toBe("10.0.0.5");
  });

  test("without a socket (app.handle) the address is unknown", () => {
    expect(clientAddress(request(), null, false)).toBeNull();
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
