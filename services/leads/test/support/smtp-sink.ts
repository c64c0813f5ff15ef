// A real SMTP server on loopback (smtp-server) that keeps what it receives, parsed enough to assert on:
// envelope, headers and the text and HTML parts. Recipients can be told to answer 4xx/5xx, or to answer late
// (a slow server: the RCPT reply waits for a promise).
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  envelopeFrom: string;
  envelopeTo: string[];
  headers: Record<string, string>;
  text: string | null;
  html: string | null;
  raw: string;
}

export interface SmtpSink {
  port: number;
  received: ReceivedMail[];
  /** Mails whose Message-ID header is exactly this. */
  byMessageId(messageId: string): ReceivedMail[];
  waitFor(messageId: string, timeoutMs?: number): Promise<ReceivedMail>;
  stop(): Promise<void>;
}

/** Answer for a recipient: null accepts, else an SMTP reply code and text. */
export type RecipientReply = (address: string, attempt: number) => { code: number; text: string } | null;

/** Before answering RCPT TO for a recipient: a promise to wait for (a slow or stuck server), or undefined. */
export type RecipientWait = (address: string, attempt: number) => Promise<unknown> | undefined;

/** `port`: listen there (a sink started again where a stopped one was: our relay back after an outage); `host`: on that address (default loopback). */
export async function startSmtpSink(
  opts: { reply?: RecipientReply; wait?: RecipientWait; port?: number; host?: string } = {},
): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  const attempts = new Map<string, number>();
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    // stop() ends open (pooled) client connections at once instead of waiting for them.
    closeTimeout: 100,
    onRcptTo(address, _session, callback) {
      const attempt = (attempts.get(address.address) ?? 0) + 1;
      attempts.set(address.address, attempt);
      const answer = () => {
        const reply = opts.reply?.(address.address, attempt);
        if (!reply) return callback();
        callback(Object.assign(new Error(reply.text), { responseCode: reply.code }));
      };
      const waiting = opts.wait?.(address.address, attempt);
      if (waiting) void waiting.then(answer, answer);
      else answer();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
        received.push({
          envelopeFrom,
          envelopeTo: session.envelope.rcptTo.map((r) => r.address),
          raw,
          ...parseMessage(raw),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? "127.0.0.1", resolve));
  const port = (server.server.address() as { port: number }).port;
  const byMessageId = (id: string) => received.filter((m) => m.headers["message-id"] === id);
  return {
    port,
    received,
    byMessageId,
    async waitFor(messageId, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const [mail] = byMessageId(messageId);
        if (mail) return mail;
        await Bun.sleep(50);
      }
      throw new Error(`no mail with Message-ID ${messageId} within ${timeoutMs} ms`);
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface Parsed {
  headers: Record<string, string>;
  text: string | null;
  html: string | null;
}

function decodeWords(value: string): string {
  return value.replace(/=\?([^?]+)\?([QB])\?([^?]*)\?=\s*/gi, (_, _charset: string, enc: string, data: string) =>
    enc.toUpperCase() === "B"
      ? Buffer.from(data, "base64").toString("utf8")
      : decodeQuotedPrintable(data.replace(/_/g, " ")),
  );
}

function decodeQuotedPrintable(value: string): string {
  const soft = value.replace(/=\r?\n/g, "");
  const bytes: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    const hex = soft.slice(i + 1, i + 3);
    if (soft[i] === "=" && /^[0-9A-F]{2}$/i.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(soft[i]!, "utf8"));
  }
  return Buffer.from(bytes).toString("utf8");
}

/** A raw RFC 5322 message's headers and its text and HTML parts, decoded (also for mail read from another sink). */
export function parseMessage(raw: string): Parsed {
  const split = raw.search(/\r?\n\r?\n/);
  const head = split < 0 ? raw : raw.slice(0, split);
  const body = split < 0 ? "" : raw.slice(split).replace(/^\r?\n\r?\n/, "");
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] ??= decodeWords(line.slice(colon + 1).trim());
  }
  const type = headers["content-type"] ?? "text/plain";
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (/^multipart\//i.test(type) && boundary) {
    let text: string | null = null;
    let html: string | null = null;
    for (const part of body.split(`--${boundary}`).slice(1)) {
      if (part.startsWith("--")) break;
      const inner = parseMessage(part.replace(/^\r?\n/, ""));
      text ??= inner.text;
      html ??= inner.html;
    }
    return { headers, text, html };
  }
  const encoding = (headers["content-transfer-encoding"] ?? "7bit").toLowerCase();
  const content =
    encoding === "base64"
      ? Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8")
      : encoding === "quoted-printable"
        ? decodeQuotedPrintable(body)
        : body;
  const trimmed = content.replace(/\r\n/g, "\n").replace(/\n$/, "");
  return {
    headers,
    text: /^text\/plain/i.test(type) ? trimmed : null,
    html: /^text\/html/i.test(type) ? trimmed : null,
  };
}
