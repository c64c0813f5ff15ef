// Types for bodies.mjs (plain JavaScript so the Node load generator can import it).
export interface BodyOptions {
  descriptionLength?: number;
  photos?: number;
}
export function brokerBody(n?: number): { name: string; email: string; [key: string]: unknown };
export function listingBody(
  brokerExternalId: string,
  n?: number,
  opts?: BodyOptions,
): {
  brokerExternalId: string;
  status: string;
  businessType: string;
  title: string;
  description: string;
  establishedAt: string;
  location: { streetAddress1: string; city: string; state: string; postalCode: string; country: string; visibility: string };
  financials: { askingPrice: number; revenue: number; sde: number; inventory: number; ffande: number };
  property: Record<string, unknown>;
  financing: Record<string, unknown>;
  photos: { url: string; sortKey: number }[];
};
export function externalId(prefix: string, n: number): string;
