// A loopback TCP port that refuses connections until opened, then forwards them to a real server. Lets a test
// start processes while "every dependency is down" without stopping the shared servers other tests use.
import net from "node:net";

export interface GatedProxy {
  port: number;
  /** Starts accepting and forwarding. */
  open(): Promise<void>;
  /** Cuts every forwarded connection and refuses new ones until open() again. */
  close(): Promise<void>;
}

export async function createGatedProxy(target: { hostname: string; port: number }): Promise<GatedProxy> {
  // Reserve a free port, then release it: nothing listens there until open() (connections are refused).
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));

  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
      s.on("close", () => sockets.delete(s));
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  let listening = false;
  return {
    port,
    async open() {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, "127.0.0.1", () => resolve());
      });
      listening = true;
    },
    async close() {
      for (const s of sockets) s.destroy();
      if (listening) await new Promise<void>((resolve) => server.close(() => resolve()));
      // open() may start it again (an outage that ends).
      listening = false;
    },
  };
}

/** host:port of a URL or a bare "host:port" (Kafka's list: the first broker). */
export function endpointOfUrl(value: string): { hostname: string; port: number } {
  const first = value.split(",")[0]!;
  const url = new URL(first.includes("://") ? first : `tcp://${first}`);
  return { hostname: url.hostname, port: Number(url.port) };
}

/** The same URL with host and port replaced by the proxy's. */
export function viaProxy(value: string, proxy: GatedProxy): string {
  const first = value.split(",")[0]!;
  if (!first.includes("://")) return `127.0.0.1:${proxy.port}`;
  const url = new URL(first);
  url.hostname = "127.0.0.1";
  url.port = String(proxy.port);
  return url.toString().replace(/\/$/, "");
}
