// The stack's SMTP sink where no mailpit image can be pulled: accepts every mail on :1025 (no TLS, no auth) and
// lists what it got on :8025 in the shape of mailpit's API (GET /api/v1/messages: newest first, From, To,
// Subject, MessageID), so tests and people read either the same way. Memory only, bounded to the newest
// MP_MAX_MESSAGES (mailpit's own setting, so compose sets both at once; default 1000).
import { SMTPServer } from "smtp-server";

interface Address {
  Name: string;
  Address: string;
}
interface Message {
  ID: string;
  MessageID: string;
  From: Address;
  To: Address[];
  Subject: string;
  Created: string;
  Size: number;
  Raw: string;
}

const messages: Message[] = [];
const maxMessages = Math.max(1, Number(process.env.MP_MAX_MESSAGES) || 1000);
const header = (raw: string, name: string) =>
  new RegExp(`^${name}:[ \\t]*(.*(?:\\r?\\n[ \\t].*)*)`, "im")
    .exec(raw.split(/\r?\n\r?\n/)[0] ?? "")?.[1]
    ?.replace(/\r?\n[ \t]+/g, " ")
    .trim() ?? "";

const smtp = new SMTPServer({
  secure: false,
  authOptional: true,
  disabledCommands: ["STARTTLS", "AUTH"],
  logger: false,
  size: 10 * 1024 * 1024,
  onData(stream, session, callback) {
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      messages.unshift({
        ID: crypto.randomUUID(),
        MessageID: header(raw, "Message-ID").replace(/^<|>$/g, ""),
        From: { Name: "", Address: session.envelope.mailFrom ? session.envelope.mailFrom.address : "" },
        To: session.envelope.rcptTo.map((r) => ({ Name: "", Address: r.address })),
        Subject: header(raw, "Subject"),
        Created: new Date().toISOString(),
        Size: raw.length,
        Raw: raw,
      });
      messages.length = Math.min(messages.length, maxMessages);
      console.log(JSON.stringify({ msg: "smtp-sink: received", to: session.envelope.rcptTo.map((r) => r.address) }));
      callback();
    });
  },
});
smtp.listen(1025, "0.0.0.0");

const http = Bun.serve({
  port: 8025,
  hostname: "0.0.0.0",
  fetch(req) {
    const url = new URL(req.url);
    if (url.pathname === "/readyz" || url.pathname === "/livez") return new Response("ok");
    if (url.pathname === "/api/v1/messages" && req.method === "GET") {
      return Response.json({ total: messages.length, messages: messages.map(({ Raw: _raw, ...m }) => m) });
    }
    if (url.pathname === "/api/v1/messages" && req.method === "DELETE")
      return ((messages.length = 0), Response.json({}));
    const raw = /^\/api\/v1\/message\/([^/]+)\/raw$/.exec(url.pathname);
    const found = raw && messages.find((m) => m.ID === raw[1]);
    if (found) return new Response(found.Raw, { headers: { "content-type": "message/rfc822" } });
    return Response.json({ status: "error", error: "not found" }, { status: 404 });
  },
});

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    void http.stop();
    smtp.close(() => process.exit(0));
  });
}
console.log(JSON.stringify({ msg: "smtp-sink: listening", smtp: 1025, http: 8025 }));
