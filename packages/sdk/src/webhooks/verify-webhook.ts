// Verifies webhook deliveries signed the Standard Webhooks way (https://www.standardwebhooks.com):
//   webhook-id, webhook-timestamp (Unix seconds), webhook-signature: space-separated "v1,<base64 HMAC-SHA256>"
//   of "<id>.<timestamp>.<raw body>", keyed with the secret "whsec_<base64>" decoded.
// During a secret rotation the service signs with both secrets; the receiver may also hold several secrets.
import { createHmac, timingSafeEqual } from "node:crypto";
import { PssError } from "../client/errors.ts";

export class WebhookVerificationError extends PssError {
  override name = "WebhookVerificationError";
}

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far the timestamp may be from now, either way, in seconds (default 300: replays of older deliveries fail). */
  toleranceSeconds?: number;
  /** The current time (for tests). */
  now?: Date | number;
}

export interface VerifiedWebhook<T = unknown> {
  id: string;
  timestamp: Date;
  /** The body parsed as JSON. */
  payload: T;
}

const PREFIX = "whsec_";

function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
  const key = Buffer.from(encoded, "base64");
  if (key.length === 0)
    throw new WebhookVerificationError("the webhook secret is empty or not base64 (expected whsec_<base64>)");
  return key;
}

function header(headers: WebhookHeaders, name: string): string | null {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name);
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
}

function bodyBytes(body: string | Uint8Array | ArrayBuffer): Buffer {
  if (typeof body === "string") return Buffer.from(body, "utf8");
  return Buffer.from(body instanceof ArrayBuffer ? new Uint8Array(body) : body);
}

/** The v1 signature of a delivery: what the service sends in webhook-signature ("v1,<base64>"). */
export function signWebhook(secret: string, id: string, timestamp: number | Date, body: string | Uint8Array): string {
  const seconds = timestamp instanceof Date ? Math.floor(timestamp.getTime() / 1000) : timestamp;
  const mac = createHmac("sha256", secretKey(secret))
    .update(`${id}.${seconds}.`)
    .update(bodyBytes(body))
    .digest("base64");
  return `v1,${mac}`;
}

/**
 * Checks a delivery and returns its parsed payload, or throws WebhookVerificationError. Pass the body exactly as
 * received (the raw text or bytes, before any JSON parsing: re-serialised JSON does not verify).
 * `secrets`: one secret, or several during your own rotation (any one verifying is enough).
 */
export function verifyWebhook<T = unknown>(
  secrets: string | string[],
  headers: WebhookHeaders,
  body: string | Uint8Array | ArrayBuffer,
  options: VerifyOptions = {},
): VerifiedWebhook<T> {
  const id = header(headers, "webhook-id");
  const timestampText = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id) throw new WebhookVerificationError("missing webhook-id header");
  if (!timestampText) throw new WebhookVerificationError("missing webhook-timestamp header");
  if (!signatures) throw new WebhookVerificationError("missing webhook-signature header");
  if (!/^\d{1,15}$/.test(timestampText.trim()))
    throw new WebhookVerificationError("webhook-timestamp is not a number of seconds");

  const timestamp = Number(timestampText.trim());
  const now = Math.floor(
    (options.now === undefined ? Date.now() : typeof options.now === "number" ? options.now : options.now.getTime()) /
      1000,
  );
  const tolerance = options.toleranceSeconds ?? 300;
  if (timestamp < now - tolerance)
    throw new WebhookVerificationError(`webhook-timestamp is more than ${tolerance} s old`);
  if (timestamp > now + tolerance)
    throw new WebhookVerificationError(`webhook-timestamp is more than ${tolerance} s in the future`);

  const raw = bodyBytes(body);
  const offered = signatures
    .split(" ")
    .filter((s) => s.startsWith("v1,"))
    .map((s) => Buffer.from(s.slice(3), "base64"));
  const keys = (Array.isArray(secrets) ? secrets : [secrets]).map(secretKey);
  if (keys.length === 0) throw new WebhookVerificationError("no webhook secret given");
  const verified = keys.some((key) => {
    const expected = createHmac("sha256", key).update(`${id}.${timestamp}.`).update(raw).digest();
    return offered.some((sig) => sig.length === expected.length && timingSafeEqual(sig, expected));
  });
  if (!verified)
    throw new WebhookVerificationError("no webhook-signature matches: wrong secret, or the body was changed");

  let payload: T;
  try {
    payload = JSON.parse(raw.toString("utf8")) as T;
  } catch {
    throw new WebhookVerificationError("the verified body is not JSON");
  }
  return { id, timestamp: new Date(timestamp * 1000), payload };
}
