// Which URLs the downloader may fetch at all: http or https. Where they may connect is the shared SSRF policy
// (packages/service-kit/src/outbound-destination.ts).
import { Failures } from "../failures.ts";

/** Parses a URL the downloader may fetch (a redirect's Location against the current URL): http or https only. */
export function parseImageUrl(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = base ? new URL(raw, base) : new URL(raw);
  } catch {
    throw Failures.unsupportedScheme();
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw Failures.unsupportedScheme();
  return url;
}
