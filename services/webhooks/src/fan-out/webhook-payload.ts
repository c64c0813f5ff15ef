// The body a receiver gets: {type, timestamp, data}. `data` is the fact's payload as its producer wrote it, plus
// the public URLs of the records it names (only this service knows PUBLIC_BASE_URL among the producers).
export function withPublicUrls(data: Record<string, unknown>, publicBaseUrl: string): Record<string, unknown> {
  const out: Record<string, unknown> = { ...data };
  if (typeof data.serviceListingId === "number" || typeof data.serviceListingId === "string") out.serviceListingUrl = `${publicBaseUrl}/listings/${data.serviceListingId}`;
  if (typeof data.serviceBrokerId === "string" || typeof data.serviceBrokerId === "number") out.serviceProfileUrl = `${publicBaseUrl}/brokers/${data.serviceBrokerId}`;
  return out;
}

