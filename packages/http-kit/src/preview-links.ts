// Signed, short-lived links to the preview of a test record (docs/sandbox.md): the serviceListingUrl and
// serviceProfileUrl a test key gets. A link is {PUBLIC_BASE_URL}/preview/listings/{id}?expires=<unix seconds>&signature=<HMAC>;
// it opens the preview without a key until it expires. The HMAC key is PREVIEW_LINK_SECRET when configured,
// else one kept in PostgreSQL (created once, shared by every API instance).
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { EnvReader } from "@pss/service-kit";
import type postgres from "postgres";

export const MIN_PREVIEW_SECRET_LENGTH = 32;

/**
 * PREVIEW_LINK_SECRET (the same on every API, portal and marketplace instance: the API and the portal sign, the
 * marketplace verifies);
 * undefined: the key kept in PostgreSQL.
 */
export function readPreviewLinkSecret(r: EnvReader): string | undefined {
  const secret = r.optionalString("PREVIEW_LINK_SECRET");
  if (secret !== undefined && secret.length < MIN_PREVIEW_SECRET_LENGTH)
    r.problem(
      `PREVIEW_LINK_SECRET must be at least ${MIN_PREVIEW_SECRET_LENGTH} characters (a random value, the same on every API, portal and marketplace instance)`,
    );
  return secret;
}

export type PreviewKind = "listing" | "broker";

export interface PreviewLinks {
  listingUrl(serviceListingId: number | string): Promise<string>;
  brokerUrl(serviceBrokerId: string): Promise<string>;
  /** Whether a link's expires and signature are valid for this record now. */
  verify(
    kind: PreviewKind,
    id: string,
    expires: string | null,
    signature: string | null,
  ): Promise<"valid" | "invalid" | "expired">;
}

export interface PreviewLinkOptions {
  sql: postgres.Sql;
  publicBaseUrl: string;
  /** PREVIEW_LINK_SECRET; absent: the secret kept in PostgreSQL. */
  secret?: string;
  /** How long a link works (PREVIEW_LINK_TTL_SECONDS). */
  ttlSeconds: number;
  now?: () => number;
}

/**
 * Expiry times are rounded up to this step, so links handed out within the same few minutes are identical (an
 * identical PUT repeat answers the same URL) and a link lives between ttl and ttl + step.
 */
export const EXPIRY_STEP_SECONDS = 300;

const PATHS: Record<PreviewKind, string> = { listing: "listings", broker: "brokers" };

export function createPreviewLinks(opts: PreviewLinkOptions): PreviewLinks {
  const now = opts.now ?? Date.now;
  const configured = opts.secret ? Buffer.from(opts.secret, "utf8") : null;
  let stored: Promise<Buffer> | null = null;

  /** The stored secret, created by whichever instance needs it first; a failed read is tried again next time. */
  const key = (): Promise<Buffer> => {
    if (configured) return Promise.resolve(configured);
    stored ??= (async () => {
      await opts.sql`INSERT INTO preview_link_secret (id, secret) VALUES (1, ${randomBytes(32)}) ON CONFLICT (id) DO NOTHING`;
      const [row] = await opts.sql<{ secret: Buffer }[]>`SELECT secret FROM preview_link_secret WHERE id = 1`;
      return row!.secret;
    })().catch((err) => {
      stored = null;
      throw err;
    });
    return stored;
  };

  const sign = (secret: Buffer, kind: PreviewKind, id: string, expires: string) =>
    createHmac("sha256", secret).update(`pss-preview-v1\n${kind}\n${id}\n${expires}`).digest();

  async function url(kind: PreviewKind, id: string): Promise<string> {
    const expires = String(Math.ceil((now() / 1000 + opts.ttlSeconds) / EXPIRY_STEP_SECONDS) * EXPIRY_STEP_SECONDS);
    const signature = sign(await key(), kind, id, expires).toString("base64url");
    return `${opts.publicBaseUrl}/preview/${PATHS[kind]}/${id}?expires=${expires}&signature=${signature}`;
  }

  return {
    listingUrl: (id) => url("listing", String(id)),
    brokerUrl: (id) => url("broker", id),
    async verify(kind, id, expires, signature) {
      if (!expires || !signature || !/^[0-9]{1,12}$/.test(expires) || !/^[A-Za-z0-9_-]{43}$/.test(signature))
        return "invalid";
      const expected = sign(await key(), kind, id, expires);
      const given = Buffer.from(signature, "base64url");
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return "invalid";
      return Number(expires) * 1000 < now() ? "expired" : "valid";
    },
  };
}
