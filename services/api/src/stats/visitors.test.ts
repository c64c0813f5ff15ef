import { describe, expect, test } from "bun:test";
import { isKnownBot, utcDay, visitorHash } from "./visitors.ts";

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

test("a visitor's hash depends on the day's key, the address and the User-Agent, and reveals neither", () => {
  const h = visitorHash("key-1", "203.0.113.7", "Firefox");
  expect(h).toBe(visitorHash("key-1", "203.0.113.7", "Firefox"));
  expect(h).not.toBe(visitorHash("key-2", "203.0.113.7", "Firefox"));
  expect(h).not.toBe(visitorHash("key-1", "203.0.113.8", "Firefox"));
  expect(h).not.toBe(visitorHash("key-1", "203.0.113.7", "Chrome"));
  expect(h).not.toContain("203");
  expect(utcDay(new Date("2026-05-01T23:59:59.999-02:00"))).toBe("2026-05-02");
});
