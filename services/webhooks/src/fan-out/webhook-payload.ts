// The body a receiver gets: {type, timestamp, data}. `data` is the fact's payload as its producer wrote it, plus
// the URLs of the records it names (only this service knows PUBLIC_BASE_URL among the producers). A test record
// (docs/sandbox.md) has no public page: its URLs are its previews, which open with the partner's test key
// (Authorization: Bearer); the read-back gives signed preview links that open without one.
import type { RecordMode } from "@pss/contracts";

export function withPublicUrls(data: Record<string, unknown>, publicBaseUrl: string, mode: RecordMode = "live"): Record<string, unknown> {
  const out: Record<string, unknown> = { ...data };
  const base = mode === "live" ? publicBaseUrl : `${publicBaseUrl}/preview`;
  if (typeof data.serviceListingId === "number" || typeof data.serviceListingId === "string") out.serviceListingUrl = `${base}/listings/${data.serviceListingId}`;
  if (typeof data.serviceBrokerId === "string" || typeof data.serviceBrokerId === "number") out.serviceProfileUrl = `${base}/brokers/${data.serviceBrokerId}`;
  return out;
}
