// A partner's webhook receiver (docs/webhooks.md): verifies every request with the standardwebhooks package,
// acknowledges at once, handles each delivery once (by webhook-id) and ignores events older than what it already
// applied (by the record's version: there is no ordering promise). Runs on Bun, or on Node.js 22.7 or later, which
// runs TypeScript by stripping its types (up to 22.17 with the flag below; from 22.18 and 23.6 on by default). On
// older Node.js compile it to JavaScript first (TypeScript's tsc) or use Bun.
//   npm install standardwebhooks
//   PSS_WEBHOOK_SECRETS=whsec_... node --experimental-strip-types webhook-receiver.ts   (or: bun webhook-receiver.ts)
// Keep the state below in your database in production; memory is enough to show the rules.
import { createServer, type IncomingMessage, type Server } from "node:http";
import { fileURLToPath } from "node:url";
import { Webhook } from "standardwebhooks";

export interface PssEvent {
  type: string;
  timestamp: string;
  data: Record<string, any>;
}

export interface ReceiverOptions {
  /** The endpoint's secret(s): during your own switch to a rotated secret, list the new and the old. */
  secrets: string[];
  /** Your business logic; called once per delivery, never with a stale event. */
  onEvent: (event: PssEvent) => void | Promise<void>;
}

/** Which record an event is about, and so which version it must beat. */
function recordOf(event: PssEvent): string | null {
  const d = event.data;
  switch (event.type) {
    case "listing.published":
    case "listing.unpublished":
      return `listing-visibility:${d.serviceListingId}`;
    case "listing.media.processed":
      return `listing-media:${d.serviceListingId}`;
    case "listing.report.changed":
      return `listing-report:${d.serviceListingId}`;
    case "broker.avatar.processed":
      return `broker-avatar:${d.serviceBrokerId}`;
    case "lead.received":
      return `office-leads:${d.officeId}`;
    default:
      return null; // ping, and types added later: no version to compare
  }
}

export function createWebhookReceiver(options: ReceiverOptions): Server {
  const verifiers = options.secrets.map((secret) => new Webhook(secret));
  const handled = new Set<string>(); // webhook-ids already handled
  const versions = new Map<string, number>(); // record -> newest version applied

  function verify(body: string, headers: Record<string, string>): PssEvent | null {
    for (const verifier of verifiers) {
      try {
        // Checks the signature over id, timestamp and the raw body, and refuses timestamps over 5 minutes off.
        return verifier.verify(body, headers) as PssEvent;
      } catch {}
    }
    return null;
  }

  async function receive(body: string, headers: Record<string, string>): Promise<number> {
    const event = verify(body, headers);
    if (!event) return 400; // not from the service (or tampered with): refuse, it will be retried if it was
    const id = headers["webhook-id"]!;
    if (handled.has(id)) return 204; // a repeat of a delivery already handled (delivery is at least once)
    const record = recordOf(event);
    const version = Number(event.data.version);
    if (record && (versions.get(record) ?? 0) >= version) {
      handled.add(id); // an older state than one already applied: nothing to do
      return 204;
    }
    await options.onEvent(event);
    if (record) versions.set(record, version);
    handled.add(id);
    return 204;
  }

  return createServer(async (req: IncomingMessage, res) => {
    if (req.method !== "POST") return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    try {
      res.writeHead(await receive(Buffer.concat(chunks).toString("utf8"), headers)).end();
    } catch {
      res.writeHead(500).end(); // your logic failed: the service tries again later, with the same webhook-id
    }
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const secrets = (process.env.PSS_WEBHOOK_SECRETS ?? "").split(",").filter(Boolean);
  if (secrets.length === 0) throw new Error("set PSS_WEBHOOK_SECRETS to the endpoint's whsec_ secret");
  const port = Number(process.env.PORT ?? 3000);
  createWebhookReceiver({ secrets, onEvent: (event) => console.log(event.type, JSON.stringify(event.data)) }).listen(
    port,
    () => console.log(`listening on :${port}`),
  );
}
