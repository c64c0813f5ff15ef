// Random tokens and what is stored of them: only SHA-256 hashes reach the database, so a copy of it opens no
// session and uses no link. The CSRF token of a form is derived from the secret it protects (the session cookie, or
// before signing in the browser cookie): a page on another site can neither read nor compute it.
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const newToken = () => randomBytes(32).toString("base64url");
export const sha256 = (value: string) => createHash("sha256").update(value).digest();
export const isTokenText = (value: string | undefined): value is string =>
  value !== undefined && /^[A-Za-z0-9_-]{43}$/.test(value);

export function csrfTokenFor(secret: string): string {
  return createHmac("sha256", secret).update("pss-portal-csrf").digest("base64url");
}

export function isCsrfTokenFor(secret: string, given: unknown): boolean {
  if (typeof given !== "string") return false;
  const expected = Buffer.from(csrfTokenFor(secret));
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
