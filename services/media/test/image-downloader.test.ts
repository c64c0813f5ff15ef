// The downloader against a real local HTTP server, with a stand-in resolver so names can point anywhere.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { LookupAddress } from "node:dns";
import { createImageDownloader, type DownloadLimits } from "../src/download/image-downloader.ts";
import { MediaFailure } from "../src/failures.ts";
import { startImageServer, type ImageServer } from "./support/image-server.ts";

let images: ImageServer;
let hostHeaders: string[] = [];
let echo: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  images = await startImageServer();
  echo = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req) => (hostHeaders.push(req.headers.get("host") ?? ""), new Response(images.images["/avatar-tiny.jpg"])),
  });
});
afterAll(() => {
  images.stop();
  echo.stop(true);
});

const limits: DownloadLimits = { maxBytes: 1024 * 1024, connectTimeoutMs: 1000, totalTimeoutMs: 1500, maxRedirects: 3 };

function downloader(dns: Record<string, string[]>, allowedHosts: string[] = [], over: Partial<DownloadLimits> = {}) {
  const lookups: string[] = [];
  const resolve = async (host: string): Promise<LookupAddress[]> => {
    lookups.push(host);
    const found = dns[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return found.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return { lookups, d: createImageDownloader({ limits: { ...limits, ...over }, allowedHosts, resolve }) };
}

const failureOf = (p: Promise<unknown>) =>
  p.then(
    () => "downloaded",
    (err) => (err instanceof MediaFailure ? [err.reason, err.transient] : String(err)),
  );

describe("address checks", () => {
  test("connects to the address it vetted, once resolved, keeping the name in the Host header", async () => {
    // The system resolver knows no "images.test": success proves the connection used the vetted address.
    const { d, lookups } = downloader({ "images.test": ["127.0.0.1"] }, [`images.test:${echo.port}`]);
    hostHeaders = [];
    const bytes = await d.download(`http://images.test:${echo.port}/a.jpg`);
    expect(bytes.equals(images.images["/avatar-tiny.jpg"]!)).toBe(true);
    expect(lookups).toEqual(["images.test"]);
    expect(hostHeaders).toEqual([`images.test:${echo.port}`]);
  });

  test("a name resolving to a private address is refused without connecting", async () => {
    const { d } = downloader({ "internal.test": ["10.1.2.3"] });
    expect(await failureOf(d.download("http://internal.test/a.jpg"))).toEqual(["address not allowed", false]);
  });

  test("a name with one public and one private answer is refused", async () => {
    const { d } = downloader({ "mixed.test": ["93.184.215.14", "127.0.0.1"] });
    expect(await failureOf(d.download("http://mixed.test/a.jpg"))).toEqual(["address not allowed", false]);
  });

  test("IPv6 loopback and IPv4-mapped private literals are refused", async () => {
    const { d } = downloader({});
    expect(await failureOf(d.download(`http://[::1]:${echo.port}/a.jpg`))).toEqual(["address not allowed", false]);
    expect(await failureOf(d.download(`http://[::ffff:127.0.0.1]:${echo.port}/a.jpg`))).toEqual([
      "address not allowed",
      false,
    ]);
  });

  test("the allowlist entry's port matters", async () => {
    const { d } = downloader({}, [`127.0.0.1:${echo.port! + 1}`]);
    expect(await failureOf(d.download(`http://127.0.0.1:${echo.port}/a.jpg`))).toEqual(["address not allowed", false]);
  });

  test("every redirect hop is checked again: scheme and address", async () => {
    const { d } = downloader({}, [`127.0.0.1:${images.port}`]);
    expect(await failureOf(d.download(images.url("/to-private.jpg?t=dl")))).toEqual(["address not allowed", false]);
    expect(await failureOf(d.download(images.url("/to-ftp.jpg?t=dl")))).toEqual(["unsupported URL scheme", false]);
  });

  test("an unknown host is reported as such", async () => {
    const { d } = downloader({});
    expect(await failureOf(d.download("http://nowhere.test/a.jpg"))).toEqual(["host not found", false]);
  });
});

describe("limits", () => {
  const allowed = () => downloader({}, [`127.0.0.1:${images.port}`]).d;

  test("follows up to three redirects and refuses the fourth", async () => {
    expect((await allowed().download(images.url("/redirect/3/photo.jpg"))).equals(images.images["/photo.jpg"]!)).toBe(
      true,
    );
    expect(await failureOf(allowed().download(images.url("/redirect/4/photo.jpg")))).toEqual([
      "too many redirects",
      false,
    ]);
  });

  test("a declared size over the limit is refused; so is a stream without a declared size once it passes the limit", async () => {
    const began = Date.now();
    expect(await failureOf(allowed().download(images.url("/huge.jpg?t=dl")))).toEqual(["image too large", false]);
    expect(await failureOf(allowed().download(images.url("/endless.jpg?t=dl")))).toEqual(["image too large", false]);
    expect(Date.now() - began).toBeLessThan(1500);
  });

  test("a host that never answers times out (a transient failure)", async () => {
    const began = Date.now();
    expect(await failureOf(allowed().download(images.url("/slow.jpg?t=dl")))).toEqual(["timed out", true]);
    expect(Date.now() - began).toBeGreaterThanOrEqual(1400);
    expect(Date.now() - began).toBeLessThan(3000);
  });

  test("HTTP errors: 4xx are permanent, 5xx transient; a refused connection is transient", async () => {
    expect(await failureOf(allowed().download(images.url("/missing.jpg?t=dl")))).toEqual([
      "HTTP 404 from image host",
      false,
    ]);
    expect(await failureOf(allowed().download(images.url("/always-503.jpg?t=dl")))).toEqual([
      "HTTP 503 from image host",
      true,
    ]);
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const port = closed.port;
    closed.stop(true);
    expect(await failureOf(downloader({}, [`127.0.0.1:${port}`]).d.download(`http://127.0.0.1:${port}/a.jpg`))).toEqual(
      ["connection refused", true],
    );
  });
});
