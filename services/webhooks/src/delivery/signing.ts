// Standard Webhooks signatures: `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">` keyed with
// the secret's bytes (`whsec_` + base64). During a rotation's overlap the header carries one signature per
// secret, space-separated, so a receiver holding either secret verifies the delivery.
import { createHmac } from "node:crypto";
import { WEBHOOK_SECRET_PREFIX } from "@pss/contracts";

export function signatureOf(secret: string, webhookId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(
    secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret,
    "base64",
  );
  return `v1,${createHmac("sha256", key).update(`${webhookId}.${timestampSeconds}.${body}`).digest("base64")}`;
}

export interface SignedHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/** The three Standard Webhooks headers for one attempt; `secrets` are the current one, then the previous one if still valid. */
export function signedHeaders(
  secrets: readonly string[],
  webhookId: string,
  timestampSeconds: number,
  body: string,
): SignedHeaders {
  if (secrets.length === 0) throw new Error("no signing secret");
  return {
    "webhook-id": webhookId,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": secrets.map((s) => signatureOf(s, webhookId, timestampSeconds, body)).join(" "),
  };
}
