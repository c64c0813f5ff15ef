// The listing as the partner sees it, in canonical form: what is stored, hashed and compared.
import type { ListingBody, ListingStatus, Photo, Visibility } from "@pss/contracts";
import type { ErrorDetail } from "@pss/http-kit";
import { mergePatch, pruneEmpty, type Json, type JsonObject } from "../records/merge-patch.ts";

export interface ListingDocument {
  status: ListingStatus;
  businessType: string;
  location: {
    streetAddress1?: string;
    city: string;
    state: string;
    postalCode?: string;
    country: string;
    visibility: Visibility;
  };
  title?: string;
  description?: string;
  establishedAt?: string;
  financials?: Record<string, number>;
  property?: { propertyKind?: string; areaSqft?: number; rentData?: Record<string, unknown> };
  financing?: Record<string, unknown>;
  photos?: Photo[];
}

const toUtc = (value: string) => new Date(value.replace(/([+-]\d{2})(\d{2})$/, "$1:$2")).toISOString();

/** The part of a body that merges into the document, with date-times and photo order made canonical. */
function patchOf(body: ListingBody): JsonObject {
  const { brokerExternalId: _ref, broker: _inline, ...patch } = body;
  // Copy only what is rewritten below; mergePatch never mutates its inputs.
  const out = { ...patch } as ListingBody;
  if (typeof out.establishedAt === "string") out.establishedAt = toUtc(out.establishedAt);
  const rent = out.property?.rentData;
  if (rent && typeof rent.leaseExpiration === "string") {
    out.property = { ...out.property, rentData: { ...rent, leaseExpiration: toUtc(rent.leaseExpiration) } };
  }
  // Lower sortKey first; equal keys keep the order the partner sent.
  if (Array.isArray(out.photos)) out.photos = [...out.photos].sort((a, b) => a.sortKey - b.sortKey);
  return out as JsonObject;
}

/** Applies a PUT body to the stored document (or to nothing, on create). May lack required fields: see missingOnCreate. */
export function applyListingBody(current: ListingDocument | null, body: ListingBody): ListingDocument {
  return (pruneEmpty(mergePatch((current ?? {}) as unknown as Json, patchOf(body)) as Json) ??
    {}) as unknown as ListingDocument;
}

/** Rules the schema cannot express. */
export function listingBodyProblems(body: ListingBody): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  if (
    body.brokerExternalId !== undefined &&
    body.broker !== undefined &&
    body.broker.externalBrokerId !== body.brokerExternalId
  ) {
    problems.push({
      path: "brokerExternalId",
      message: "differs from broker.externalBrokerId; send one of them, or the same ID in both",
    });
  }
  const seen = new Map<string, number>();
  body.photos?.forEach((photo, i) => {
    const first = seen.get(photo.url);
    if (first !== undefined)
      problems.push({
        path: `photos[${i}].url`,
        message: `repeats photos[${first}].url; each photo URL may appear once`,
      });
    else seen.set(photo.url, i);
  });
  return problems;
}

/** On create the spec requires status, businessType, location (city, state, country, visibility) and a broker. */
export function missingOnCreate(doc: Partial<ListingDocument>, hasBroker: boolean): ErrorDetail[] {
  const missing: ErrorDetail[] = [];
  if (!hasBroker)
    missing.push({
      path: "brokerExternalId",
      message: "is required when creating a listing (or send an inline broker)",
    });
  if (!doc.status) missing.push({ path: "status", message: "is required when creating a listing" });
  if (!doc.businessType) missing.push({ path: "businessType", message: "is required when creating a listing" });
  if (!doc.location) missing.push({ path: "location", message: "is required when creating a listing" });
  else {
    for (const field of ["city", "state", "country", "visibility"] as const) {
      if (!doc.location[field])
        missing.push({ path: `location.${field}`, message: "is required when creating a listing" });
    }
  }
  return missing;
}
