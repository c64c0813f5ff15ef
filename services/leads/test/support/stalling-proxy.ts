// A loopback TCP proxy in front of a real server that can stall its answers: while stalled, what the client sends
// still reaches the server (a statement runs and commits), but nothing the server answers reaches the client
// until resume(). A network that goes quiet mid-exchange, without stopping the shared server.
import net from "node:net";

export interface StallingProxy {
  port: number;
  /** Holds every answer from the server from now on (in order) until resume(). */
  stall(): void;
  /** Stalls (as stall()) once the client sends a message containing `text` (a statement's SQL, sent to be parsed). */
  stallWhenClientSends(text: string): void;
  /** Delivers what was held, and forwards again. */
  resume(): void;
  close(): Promise<void>;
}

export async function startStallingProxy(target: { hostname: string; port: number }): Promise<StallingProxy> {
  let stalled = false;
  let trigger: string | null = null;
  const links: { client: net.Socket; held: (Buffer | string)[] }[] = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.hostname);
    const link = { client, held: [] as (Buffer | string)[] };
    links.push(link);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    client.on("data", (chunk) => {
      if (trigger !== null && chunk.toString("latin1").includes(trigger)) {
        trigger = null;
        stalled = true;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk) => (stalled ? link.held.push(chunk) : client.write(chunk)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    stall() {
      stalled = true;
    },
    stallWhenClientSends(text) {
      trigger = text;
    },
    resume() {
      stalled = false;
      for (const link of links) for (const chunk of link.held.splice(0)) link.client.write(chunk);
    },
    async close() {
      for (const link of links) link.client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
