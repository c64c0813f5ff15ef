import { describe, expect, test } from "bun:test";
import { isKnownBot, utcDay, visitorHashes } from "./visitors.ts";

describe("isKnownBot", () => {
  test("browsers count; crawlers, previewers, monitors, scripts and a missing User-Agent do not", () => {
    const browsers = [
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:127.0) Gecko/20100101 Firefox/127.0",
    ];
    for (const ua of browsers) expect([ua, isKnownBot(ua)]).toEqual([ua, false]);
    const bots = [
      "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
      "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
      "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0.0.0 Safari/537.36",
      "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)",
      "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
      "curl/8.5.0",
      "python-requests/2.32.3",
      "",
      null,
    ];
    for (const ua of bots) expect([ua, isKnownBot(ua)]).toEqual([ua, true]);
  });
});

describe("visitorHashes", () => {
  const key = Buffer.alloc(32, 1);
  const FIREFOX = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:127.0) Gecko/20100101 Firefox/127.0";

  test("one visitor's hashes differ from listing to listing and from day key to day key", () => {
    const on1 = visitorHashes(key, 1, "203.0.113.7", FIREFOX);
    expect(visitorHashes(key, 1, "203.0.113.7", FIREFOX)).toEqual(on1);
    const on2 = visitorHashes(key, 2, "203.0.113.7", FIREFOX);
    expect(on2.address).not.toBe(on1.address);
    expect(on2.visitor).not.toBe(on1.visitor);
    const tomorrow = visitorHashes(Buffer.alloc(32, 2), 1, "203.0.113.7", FIREFOX);
    expect(tomorrow.address).not.toBe(on1.address);
    expect(tomorrow.visitor).not.toBe(on1.visitor);
  });

  test("the User-Agent changes the visitor, not its address group; another address changes both", () => {
    const firefox = visitorHashes(key, 1, "203.0.113.7", FIREFOX);
    const chrome = visitorHashes(key, 1, "203.0.113.7", "Chrome");
    expect(chrome.address).toBe(firefox.address);
    expect(chrome.visitor).not.toBe(firefox.visitor);
    const other = visitorHashes(key, 1, "203.0.113.8", FIREFOX);
    expect(other.address).not.toBe(firefox.address);
    expect(other.visitor).not.toBe(firefox.visitor);
  });

  test("only the first 512 characters of a User-Agent count, for hashing and for bot patterns", () => {
    const long = `${FIREFOX} ${"x".repeat(600)}`;
    expect(visitorHashes(key, 1, "203.0.113.7", `${long}a`)).toEqual(visitorHashes(key, 1, "203.0.113.7", `${long}b`));
    expect(isKnownBot(`${long} Googlebot/2.1`)).toBe(false);
    expect(isKnownBot(`${FIREFOX} Googlebot/2.1`)).toBe(true);
  });
});

test("a day is the UTC day", () => {
  expect(utcDay(new Date("2026-05-01T23:59:59.999-02:00"))).toBe("2026-05-02");
});

describe("visitorHashes of an IPv6 site", () => {
  const key = Buffer.alloc(32, 1);
  test("the /48's hash is the same for every /64 in it and differs from listing to listing; IPv4 has none", () => {
    const a = visitorHashes(key, 1, "2001:db8:1:1::/64", "UA", "2001:db8:1::/48");
    const b = visitorHashes(key, 1, "2001:db8:1:2::/64", "UA", "2001:db8:1::/48");
    expect(a.site).toBeDefined();
    expect(b.site).toBe(a.site!);
    expect(b.address).not.toBe(a.address);
    expect(visitorHashes(key, 2, "2001:db8:1:1::/64", "UA", "2001:db8:1::/48").site).not.toBe(a.site!);
    expect(visitorHashes(key, 1, "203.0.113.7", "UA").site).toBeUndefined();
  });
});
