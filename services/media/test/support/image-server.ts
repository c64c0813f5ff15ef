// A local image host for tests and the benchmark: real images generated with sharp at start-up (a random colour
// per run, so file names never collide with another run's), plus every kind of hostile or broken answer.
import sharp from "sharp";
import { deflateSync } from "node:zlib";

export interface ImageServer {
  port: number;
  /** http://127.0.0.1:<port><path> */
  url(path: string): string;
  /** Requests received per path and query, e.g. hits("/photo.jpg?t=1"). */
  hits(pathAndQuery: string): number;
  /** Lets the requests waiting on /hold/<key> answer (with the photo). */
  release(key: string): void;
  images: Record<string, Buffer>;
  stop(): void;
}

function randomColour() {
  return { r: Math.floor(Math.random() * 256), g: Math.floor(Math.random() * 256), b: Math.floor(Math.random() * 256) };
}

/** A picture with some structure (so the attention crop has something to find), in a random colour unless given. */
export async function makePicture(
  width: number,
  height: number,
  format: "jpeg" | "png",
  opts: { orientation?: number; colour?: { r: number; g: number; b: number } } = {},
): Promise<Buffer> {
  const c = opts.colour ?? randomColour();
  const svg = Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
       <rect width="100%" height="100%" fill="rgb(${c.r},${c.g},${c.b})"/>
       <circle cx="${width * 0.7}" cy="${height * 0.4}" r="${Math.min(width, height) * 0.2}" fill="#fd3"/>
       <rect x="${width * 0.1}" y="${height * 0.6}" width="${width * 0.3}" height="${height * 0.25}" fill="#124"/>
     </svg>`,
  );
  let image = sharp(svg);
  if (opts.orientation) image = image.withMetadata({ orientation: opts.orientation });
  return format === "jpeg" ? image.jpeg({ quality: 85 }).toBuffer() : image.png().toBuffer();
}

/**
 * A photo-like picture: fine random texture (slightly blurred noise) compresses about as badly as a real photo, so
 * its variants have realistic sizes (tens of KB), unlike the flat shapes of makePicture.
 */
export async function makeTexturedPicture(width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = (Math.random() * 256) | 0;
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .blur(1.5)
    .jpeg({ quality: 85 })
    .toBuffer();
}

/** A PNG whose header claims width x height but whose pixel data is a few bytes: a decompression bomb's shape. */
export function pngClaiming(width: number, height: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const byte of buf) c = crcTable[(c ^ byte) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const out = Buffer.alloc(8 + data.length + 4);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), 8 + data.length);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  const firstRows = deflateSync(Buffer.alloc((width + 1) * 4));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", firstRows),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

const redirect = (location: string) => new Response(null, { status: 302, headers: { location } });

export async function startImageServer(opts: { oversizeBytes?: number } = {}): Promise<ImageServer> {
  const images: Record<string, Buffer> = {
    "/photo.jpg": await makePicture(2000, 1500, "jpeg"),
    "/photo-2.jpg": await makePicture(2000, 1500, "jpeg"),
    "/photo-3.jpg": await makePicture(1800, 1200, "jpeg"),
    "/small.png": await makePicture(800, 600, "png"),
    "/rotated.jpg": await makePicture(1600, 1200, "jpeg", { orientation: 6 }),
    "/avatar.jpg": await makePicture(1000, 800, "jpeg"),
    "/avatar-tiny.jpg": await makePicture(100, 100, "jpeg"),
    "/bomb.png": pngClaiming(30_000, 30_000),
    "/gc-only.jpg": await makePicture(1300, 900, "jpeg"),
    "/gc-shared.jpg": await makePicture(1300, 900, "jpeg"),
  };
  const counts = new Map<string, number>();
  const flaky = new Map<string, number>();
  const held = new Map<string, PromiseWithResolvers<void>>();
  const holdFor = (key: string) => {
    if (!held.has(key)) held.set(key, Promise.withResolvers<void>());
    return held.get(key)!;
  };
  const oversize = opts.oversizeBytes ?? 3 * 1024 * 1024;

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 30,
    async fetch(req) {
      const url = new URL(req.url);
      const path = url.pathname;
      counts.set(path + url.search, (counts.get(path + url.search) ?? 0) + 1);
      const image = images[path];
      if (image)
        return new Response(image, { headers: { "content-type": path.endsWith(".png") ? "image/png" : "image/jpeg" } });
      if (path === "/text.jpg")
        return new Response("this is not a picture, whatever the header says\n".repeat(20), {
          headers: { "content-type": "image/jpeg" },
        });
      if (path === "/missing.jpg") return new Response("not found", { status: 404 });
      if (path === "/gone.jpg") return new Response("gone", { status: 410 });
      if (path === "/slow.jpg") return new Promise<Response>(() => {}); // never answers
      if (path === "/huge.jpg")
        return new Response(Buffer.alloc(oversize, 0xff), { headers: { "content-type": "image/jpeg" } });
      if (path === "/endless.jpg") {
        // No Content-Length: only counting the streamed bytes can stop this.
        return new Response(
          new ReadableStream({
            async pull(controller) {
              controller.enqueue(new Uint8Array(64 * 1024));
              await Bun.sleep(1);
            },
          }),
          { headers: { "content-type": "image/jpeg" } },
        );
      }
      if (path === "/always-503.jpg") return new Response("maintenance", { status: 503 });
      if (path.startsWith("/flaky/")) {
        // Fails twice, then serves the photo.
        const n = (flaky.get(path) ?? 0) + 1;
        flaky.set(path, n);
        return n <= 2 ? new Response("busy", { status: 503 }) : new Response(images["/photo-3.jpg"]);
      }
      if (path.startsWith("/hold/")) {
        await holdFor(path.slice("/hold/".length)).promise;
        return new Response(images["/photo.jpg"]);
      }
      const hop = /^\/redirect\/(\d+)(\/.*)$/.exec(path);
      if (hop) {
        const left = Number(hop[1]);
        return redirect(left > 1 ? `/redirect/${left - 1}${hop[2]}` : hop[2]!);
      }
      if (path === "/to-private.jpg") return redirect("http://10.0.0.1/x.jpg");
      if (path === "/to-ftp.jpg") return redirect("ftp://127.0.0.1/x.jpg");
      return new Response("no such route", { status: 404 });
    },
  });
  return {
    port: server.port!,
    url: (path) => `http://127.0.0.1:${server.port}${path}`,
    hits: (pathAndQuery) => counts.get(pathAndQuery) ?? 0,
    release: (key) => holdFor(key).resolve(),
    images,
    stop: () => server.stop(true),
  };
}
