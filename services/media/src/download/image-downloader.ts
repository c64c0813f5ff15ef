// Downloads a partner's image URL defensively: http(s) only, every hop's address resolved and vetted here and
// then connected to as vetted (no second lookup an attacker's DNS could answer differently), bounded redirects,
// size and time limits enforced while streaming. Failures are MediaFailure with a partner-facing reason.
import type { LookupAddress } from "node:dns";
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import {
  DestinationRefused,
  hostOf,
  pinnedLookup,
  portOf,
  systemResolver,
  vetDestination,
  type Resolver,
} from "@pss/service-kit";
import { Failures, MediaFailure } from "../failures.ts";
import { parseImageUrl } from "./image-url.ts";

export interface DownloadLimits {
  maxBytes: number;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  maxRedirects: number;
}

export type { Resolver };

export interface ImageDownloader {
  download(url: string): Promise<Buffer>;
}

const USER_AGENT = "pss-media/1.0 (+image fetcher for partner listings)";

function networkFailure(err: unknown): MediaFailure {
  if (err instanceof MediaFailure) return err;
  if (err instanceof DestinationRefused)
    return err.reason === "host not found" ? Failures.hostNotFound() : Failures.addressNotAllowed();
  const code = String((err as { code?: unknown })?.code ?? "");
  if (code === "ENOTFOUND" || code === "ENODATA") return Failures.hostNotFound();
  if (code === "EAI_AGAIN") return Failures.dnsFailed();
  if (code === "ECONNREFUSED") return Failures.connectionRefused();
  if (code === "ECONNRESET" || code === "EPIPE") return Failures.connectionReset();
  if (code === "ETIMEDOUT") return Failures.timedOut();
  if (/CERT|SSL|TLS|ALTNAME|SELF_SIGNED/i.test(code) || /certificate|altnames/i.test(String((err as Error)?.message)))
    return Failures.tls();
  return Failures.network(code || "network error");
}

/** Rejects with `timedOut` when `promise` has not settled by `deadline`. */
async function before<T>(deadline: number, promise: Promise<T>): Promise<T> {
  let timer: Timer | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Failures.timedOut()), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

type Hop = { kind: "body"; bytes: Buffer } | { kind: "redirect"; location: string };

export function createImageDownloader(opts: {
  limits: DownloadLimits;
  allowedHosts: readonly string[];
  resolve?: Resolver;
}): ImageDownloader {
  const { limits, allowedHosts } = opts;
  const resolveHost = opts.resolve ?? systemResolver;

  /** The one address this hop will connect to (the shared SSRF policy, packages/service-kit/src/outbound-destination.ts). */
  async function vet(url: URL, deadline: number): Promise<LookupAddress> {
    return vetDestination(url, { allowedHosts, resolve: (host) => before(deadline, resolveHost(host)) }).catch((err) =>
      Promise.reject(networkFailure(err)),
    );
  }

  function fetchHop(url: URL, target: LookupAddress, deadline: number): Promise<Hop> {
    return new Promise<Hop>((resolve, reject) => {
      let settled = false;
      const timers: Timer[] = [];
      const finish = (outcome: { hop?: Hop; error?: MediaFailure }) => {
        if (settled) return;
        settled = true;
        for (const t of timers) clearTimeout(t);
        // Whatever is still coming (a redirect's body, the rest of an oversized one) is not read.
        req.destroy();
        if (outcome.error) reject(outcome.error);
        else resolve(outcome.hop!);
      };
      const client = url.protocol === "https:" ? https : http;
      const req = client.request(
        {
          protocol: url.protocol,
          hostname: hostOf(url),
          port: portOf(url),
          path: `${url.pathname}${url.search}`,
          method: "GET",
          // Host header and TLS name stay the URL's host; only the address comes from our vetted lookup.
          lookup: pinnedLookup(target),
          headers: { "user-agent": USER_AGENT, accept: "image/*", "accept-encoding": "identity" },
          agent: false,
        },
        (res: IncomingMessage) => readResponse(res),
      );
      timers.push(
        setTimeout(
          () => finish({ error: Failures.timedOut() }),
          Math.max(0, Math.min(limits.connectTimeoutMs, deadline - Date.now())),
        ),
      );
      timers.push(setTimeout(() => finish({ error: Failures.timedOut() }), Math.max(0, deadline - Date.now())));
      req.on("socket", (socket) => socket.once("connect", () => clearTimeout(timers[0])));
      req.on("error", (err) => finish({ error: networkFailure(err) }));
      req.end();

      function readResponse(res: IncomingMessage) {
        clearTimeout(timers[0]);
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && res.headers.location) {
          return finish({ hop: { kind: "redirect", location: res.headers.location } });
        }
        if (status < 200 || status >= 300) return finish({ error: Failures.httpStatus(status) });
        const declared = Number(res.headers["content-length"]);
        if (Number.isFinite(declared) && declared > limits.maxBytes) return finish({ error: Failures.tooLarge() });
        const chunks: Buffer[] = [];
        let received = 0;
        res.on("data", (chunk: Buffer) => {
          received += chunk.length;
          if (received > limits.maxBytes) return finish({ error: Failures.tooLarge() });
          chunks.push(chunk);
        });
        res.on("end", () => finish({ hop: { kind: "body", bytes: Buffer.concat(chunks) } }));
        res.on("error", (err) => finish({ error: networkFailure(err) }));
      }
    });
  }

  return {
    async download(raw) {
      const deadline = Date.now() + limits.totalTimeoutMs;
      let url = parseImageUrl(raw);
      for (let redirects = 0; ; redirects++) {
        const target = await vet(url, deadline);
        const hop = await fetchHop(url, target, deadline);
        if (hop.kind === "body") return hop.bytes;
        if (redirects >= limits.maxRedirects) throw Failures.tooManyRedirects();
        // Each hop is checked again: scheme here, address in vet().
        url = parseImageUrl(hop.location, url);
      }
    },
  };
}
