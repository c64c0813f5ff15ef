// Signing secrets as Standard Webhooks writes them: `whsec_` and the base64 of 32 random bytes (256 bits).
import { randomBytes } from "node:crypto";
import { WEBHOOK_SECRET_PREFIX } from "@pss/contracts";

export function generateWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString("base64")}`;
}
