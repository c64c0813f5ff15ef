// Sends bytes exactly as given over a TCP connection and reads whatever comes back: for requests no HTTP
// client would send (no Host, unknown methods, broken framing, oversized heads).
import { connect } from "node:net";

export interface RawResponse {
  /** Empty when the server closed the connection without answering. */
  raw: string;
  status: number | null;
  headers: Record<string, string>;
  body: string;
  json: any;
}

export function parseRawResponse(raw: string): RawResponse {
  const headEnd = raw.indexOf("\r\n\r\n");
  const head = headEnd < 0 ? raw : raw.slice(0, headEnd);
  const body = headEnd < 0 ? "" : raw.slice(headEnd + 4);
  const [statusLine, ...lines] = head.split("\r\n");
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "")?.[1];
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {}
  return { raw, status: status ? Number(status) : null, headers, body, json };
}

/** Writes `request`, then reads until the server closes or `idleMs` passes without data. */
export function sendRaw(port: number, request: string | Uint8Array, idleMs = 1500): Promise<RawResponse> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: "127.0.0.1", port });
    let timer: ReturnType<typeof setTimeout> | null = null;
    const finish = () => {
      if (timer) clearTimeout(timer);
      socket.destroy();
      resolve(parseRawResponse(Buffer.concat(chunks).toString("latin1")));
    };
    const idle = () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(finish, idleMs);
    };
    socket.on("connect", () => {
      socket.write(request);
      idle();
    });
    socket.on("data", (d: Buffer) => {
      chunks.push(d);
      idle();
    });
    socket.on("close", finish);
    socket.on("error", finish);
  });
}
