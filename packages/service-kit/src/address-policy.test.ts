import { describe, expect, test } from "bun:test";
import { isAllowlisted, isForbiddenAddress, isLocalOnlyAddress } from "./address-policy.ts";

describe("isForbiddenAddress", () => {
  test.each([
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["10.0.0.1", "private 10/8"],
    ["172.16.0.1", "private 172.16/12"],
    ["172.31.255.255", "private 172.16/12 upper end"],
    ["192.168.1.1", "private 192.168/16"],
    ["169.254.169.254", "cloud metadata (link-local)"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["100.127.255.255", "carrier-grade NAT upper end"],
    ["0.0.0.0", "this network"],
    ["0.1.2.3", "this network"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["192.0.2.10", "documentation"],
    ["198.18.0.1", "benchmarking"],
    ["::1", "IPv6 loopback"],
    ["::", "IPv6 unspecified"],
    ["fc00::1", "unique local"],
    ["fd12:3456:789a::1", "unique local"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local with zone"],
    ["ff02::1", "IPv6 multicast"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:10.1.2.3", "IPv4-mapped private"],
    ["::ffff:a9fe:a9fe", "IPv4-mapped metadata address in hex"],
    ["::127.0.0.1", "deprecated IPv4-compatible"],
    ["64:ff9b::192.168.0.1", "NAT64 of a private address"],
    ["2002:c0a8:0101::1", "6to4 of a private address"],
    ["2001:db8::1", "IPv6 documentation"],
    ["2001::1", "Teredo"],
    ["not-an-ip", "not an address"],
  ])("refuses %s (%s)", (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  test.each([
    ["93.184.215.14"],
    ["8.8.8.8"],
    ["172.15.255.255"],
    ["172.32.0.0"],
    ["100.63.255.255"],
    ["100.128.0.0"],
    ["169.253.255.255"],
    ["2606:4700::6810:85e5"],
    ["2a00:1450:4001:80b::200e"],
    ["::ffff:8.8.8.8"],
    ["64:ff9b::8.8.8.8"],
  ])("allows the public address %s", (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

describe("isAllowlisted", () => {
  const url = (s: string) => new URL(s);
  test("a host entry matches any port; host:port only that port", () => {
    expect(isAllowlisted(url("http://127.0.0.1:4000/x"), ["127.0.0.1"])).toBe(true);
    expect(isAllowlisted(url("http://127.0.0.1:4000/x"), ["127.0.0.1:4000"])).toBe(true);
    expect(isAllowlisted(url("http://127.0.0.1:4001/x"), ["127.0.0.1:4000"])).toBe(false);
    expect(isAllowlisted(url("http://images.local/x"), ["images.local:80"])).toBe(true);
    expect(isAllowlisted(url("https://images.local/x"), ["images.local:80"])).toBe(false);
  });

  test("names are compared exactly: another spelling of the same address is not allowlisted", () => {
    expect(isAllowlisted(url("http://localhost:4000/x"), ["127.0.0.1:4000"])).toBe(false);
    expect(isAllowlisted(url("http://IMAGES.local/x"), ["images.local"])).toBe(true);
  });

  test("IPv6 entries work with and without brackets", () => {
    expect(isAllowlisted(url("http://[::1]:4000/x"), ["[::1]:4000"])).toBe(true);
    expect(isAllowlisted(url("http://[::1]:4000/x"), ["::1"])).toBe(true);
    expect(isAllowlisted(url("http://[::1]:4000/x"), ["[::1]:4001"])).toBe(false);
  });
});

describe("isLocalOnlyAddress (production's loopback check)", () => {
  test.each([
    "127.0.0.1",
    "127.9.8.7",
    "0.0.0.0",
    "::1",
    "::",
    "0:0:0:0:0:0:0:1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "0:0:0:0:0:ffff:7f00:2",
    "::ffff:0.0.0.0",
    "::127.0.0.1",
  ])("%s reaches only this host", (address) => {
    expect(isLocalOnlyAddress(address)).toBe(true);
  });
  test.each([
    "10.0.0.1",
    "203.0.114.7",
    "::ffff:203.0.114.7",
    "2001:db9::1",
    "fe80::1",
    "64:ff9b::7f00:1",
    "localhost",
    "x",
  ])("%s does not", (address) => {
    expect(isLocalOnlyAddress(address)).toBe(false);
  });
});
