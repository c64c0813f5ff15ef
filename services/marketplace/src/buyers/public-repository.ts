// PostgreSQL reads for the buyers' pages: the source of truth, so a page is right the moment a PUT returns.
// Only what buyer-visibility.ts allows is ever selected; ready photos only. Test records (docs/sandbox.md) are
// read only for their previews, by the functions at the end of this file.
import {
  listingBrokerColumns,
  listingWithBroker,
  priceReducedAt,
  toListingBroker,
  toListingLocation,
} from "@pss/database/queries";
import type { Visibility } from "@pss/contracts";
import type postgres from "postgres";
import {
  brokerVisibleToBuyers,
  listingGoneForBuyers,
  listingInVisibleStatus,
  listingVisibleToBuyers,
} from "./buyer-visibility.ts";

type Sql = postgres.Sql;

export interface PublicImageRow {
  width: number | null;
  height: number | null;
  /** As stored: media keys (variant-urls.ts builds the URLs). */
  variants: unknown[] | null;
}

export interface PublicListingRow {
  id: number;
  status: string;
  businessType: string;
  title: string | null;
  description: string | null;
  descriptionOptimized: string | null;
  establishedAt: Date | null;
  location: {
    streetAddress1: string | null;
    city: string;
    state: string;
    postalCode: string | null;
    country: string;
    visibility: Visibility;
  };
  financials: Record<string, unknown> | null;
  property: Record<string, unknown> | null;
  financing: Record<string, unknown> | null;
  photos: (PublicImageRow & { sortKey: number })[];
  broker: { id: string; name: string; avatar: PublicImageRow | null };
  listedAt: Date;
  updatedAt: Date;
  /** When the asking price last went down and stayed down; null: never. */
  priceReducedAt: Date | null;
}

export interface PublicBrokerRow {
  id: string;
  name: string;
  profile: { bio?: string; website?: string; linkedInUrl?: string };
  avatar: PublicImageRow | null;
  licenses: { licenseNumber?: string; state?: string; country?: string }[];
  serviceAreas: { city?: string; county?: string; state?: string; country?: string }[];
}

// The listing with its broker and when it went live ("listedAt"), as the search documents have them
// (packages/database/src/queries), plus what only the pages show: the broker's avatar, the ready photos.
const LISTING_SELECT = (sql: Sql) => sql`
  SELECT l.id, l.status, l.business_type, l.title, l.description, l.description_optimized, l.established_at,
         l.street_address1, l.city, l.state, l.postal_code, l.country, l.visibility, l.financials, l.property, l.financing, l.updated_at,
         ${listingBrokerColumns(sql)},
         CASE WHEN b.avatar_state = 'ready' THEN json_build_object('width', b.avatar_width, 'height', b.avatar_height, 'variants', COALESCE(b.avatar_variants, '[]'::jsonb)) END AS broker_avatar,
         COALESCE((SELECT json_agg(json_build_object('sortKey', p.sort_key, 'width', p.width, 'height', p.height, 'variants', COALESCE(p.variants, '[]'::jsonb))
                                   ORDER BY p.sort_key, p.id)
                   FROM listing_photos p WHERE p.listing_id = l.id AND p.state = 'ready'), '[]') AS photos
  FROM ${listingWithBroker(sql)}`;

function toListingRow(r: postgres.Row): PublicListingRow {
  const broker = toListingBroker(r);
  return {
    id: Number(r.id),
    status: r.status,
    businessType: r.business_type,
    title: r.title,
    description: r.description,
    descriptionOptimized: r.description_optimized,
    establishedAt: r.established_at,
    location: toListingLocation(r),
    financials: r.financials,
    property: r.property,
    financing: r.financing,
    photos: r.photos,
    broker: { id: broker.brokerId, name: broker.brokerName, avatar: r.broker_avatar },
    listedAt: broker.listedAt,
    updatedAt: r.updated_at,
    priceReducedAt: broker.priceReducedAt,
  };
}

/** IDs in paths are digits only; anything else simply does not exist. */
export const isServiceId = (raw: string) => /^[1-9]\d{0,17}$/.test(raw);

export async function findVisibleListing(sql: Sql, id: string): Promise<PublicListingRow | null> {
  const rows = await sql`${LISTING_SELECT(sql)} WHERE l.id = ${id} AND ${listingVisibleToBuyers(sql, "l")}`;
  return rows[0] ? toListingRow(rows[0]) : null;
}

/** What a 410 page may say about a listing that left the market: only what finds similar ones. */
export interface GoneListing {
  businessType: string;
  state: string;
}

export async function findGoneListing(sql: Sql, id: string): Promise<GoneListing | null> {
  const [r] =
    await sql`SELECT l.business_type, l.state FROM listings l WHERE l.id = ${id} AND ${listingGoneForBuyers(sql, "l")}`;
  return r ? { businessType: r.business_type, state: r.state } : null;
}

/**
 * Buyer-visible listings like a given one: the same business type and state first, then the same business type
 * anywhere, then anything in the same state; newest first within each.
 */
export async function similarVisibleListings(sql: Sql, like: GoneListing, limit: number): Promise<PublicListingRow[]> {
  const rows = await sql`
    ${LISTING_SELECT(sql)}
    WHERE ${listingVisibleToBuyers(sql, "l")}
      AND (lower(l.business_type) = lower(${like.businessType}) OR lower(l.state) = lower(${like.state}))
    ORDER BY (lower(l.business_type) = lower(${like.businessType}))::int * 2 + (lower(l.state) = lower(${like.state}))::int DESC, l.id DESC
    LIMIT ${limit}`;
  return rows.map(toListingRow);
}

/** A broker's buyer-visible listings, newest first. */
export async function visibleListingsOfBroker(sql: Sql, brokerId: string, limit: number): Promise<PublicListingRow[]> {
  const rows =
    await sql`${LISTING_SELECT(sql)} WHERE l.broker_id = ${brokerId} AND ${listingVisibleToBuyers(sql, "l")} ORDER BY listed_at DESC, l.id DESC LIMIT ${limit}`;
  return rows.map(toListingRow);
}

export async function findPublicBroker(sql: Sql, id: string): Promise<PublicBrokerRow | null> {
  return brokerRow(sql, id, brokerVisibleToBuyers(sql, "b"));
}

async function brokerRow(
  sql: Sql,
  id: string,
  condition: postgres.Fragment | postgres.PendingQuery<postgres.Row[]>,
): Promise<PublicBrokerRow | null> {
  const [r] = await sql`
    SELECT b.id::text AS id, b.name, b.profile,
           CASE WHEN b.avatar_state = 'ready' THEN json_build_object('width', b.avatar_width, 'height', b.avatar_height, 'variants', COALESCE(b.avatar_variants, '[]'::jsonb)) END AS avatar,
           COALESCE((SELECT json_agg(json_strip_nulls(json_build_object('licenseNumber', x.license_number, 'state', x.state, 'country', x.country)) ORDER BY x.position)
                     FROM broker_licenses x WHERE x.broker_id = b.id), '[]') AS licenses,
           COALESCE((SELECT json_agg(json_strip_nulls(json_build_object('city', a.city, 'county', a.county, 'state', a.state, 'country', a.country)) ORDER BY a.position)
                     FROM broker_service_areas a WHERE a.broker_id = b.id), '[]') AS service_areas
    FROM brokers b WHERE b.id = ${id} AND ${condition}`;
  if (!r) return null;
  return {
    id: r.id,
    name: r.name,
    profile: r.profile ?? {},
    avatar: r.avatar,
    licenses: r.licenses,
    serviceAreas: r.service_areas,
  };
}

/** What a search hit must be checked against: the listing as PostgreSQL has it now. */
export interface CurrentHitState {
  /** Buyers may see it now (listingVisibleToBuyers). */
  visible: boolean;
  status: string;
  location: PublicListingRow["location"];
  broker: { id: string; name: string };
  /** The first ready photo (search results carry one; photos become ready after indexing). */
  photo: (PublicImageRow & { sortKey: number }) | null;
  /** When the asking price last went down and stayed down (the badge); null: never. */
  priceReducedAt: Date | null;
}

/**
 * One query per search page: the current status, address (with its visibility), broker and first ready photo
 * of every hit. The index lags PostgreSQL; the caller drops or redacts hits by what is returned here.
 */
export async function currentHitStates(sql: Sql, listingIds: number[]): Promise<Map<number, CurrentHitState>> {
  if (listingIds.length === 0) return new Map();
  const rows = await sql`
    SELECT l.id, ${listingVisibleToBuyers(sql, "l")} AS visible, l.status, l.street_address1, l.city, l.state, l.postal_code, l.country, l.visibility,
           b.id::text AS broker_id, b.name AS broker_name, ph.photo, ${priceReducedAt(sql, "l")} AS price_reduced_at
    FROM listings l JOIN brokers b ON b.id = l.broker_id
    LEFT JOIN LATERAL (
      SELECT json_build_object('sortKey', p.sort_key, 'width', p.width, 'height', p.height, 'variants', COALESCE(p.variants, '[]'::jsonb)) AS photo
      FROM listing_photos p WHERE p.listing_id = l.id AND p.state = 'ready' ORDER BY p.sort_key, p.id LIMIT 1
    ) ph ON true
    WHERE l.id = ANY(${listingIds}::bigint[])`;
  return new Map(
    rows.map((r) => [
      Number(r.id),
      {
        visible: r.visible === true,
        status: r.status,
        location: toListingLocation(r),
        broker: { id: r.broker_id, name: r.broker_name },
        photo: r.photo ?? null,
        priceReducedAt: r.price_reduced_at ?? null,
      },
    ]),
  );
}

// Previews of test records (services/marketplace/src/previews): the same rows as the public views, of test records only,
// in any status. Never used by a buyer-facing route.

/** A test listing's public view as it would look live, with its partner (who may open the preview). */
export async function findTestListingForPreview(
  sql: Sql,
  id: string,
): Promise<(PublicListingRow & { partnerId: string }) | null> {
  const rows =
    await sql`SELECT x.*, t.partner_id::text AS preview_partner_id FROM (${LISTING_SELECT(sql)} WHERE l.id = ${id} AND l.mode = 'test') x JOIN listings t ON t.id = x.id`;
  return rows[0] ? { ...toListingRow(rows[0]), partnerId: rows[0].preview_partner_id } : null;
}

/** A test broker's public profile as it would look live, with the test listings a live profile would list. */
export async function findTestBrokerForPreview(
  sql: Sql,
  id: string,
  limit: number,
): Promise<{ broker: PublicBrokerRow; partnerId: string; listings: PublicListingRow[] } | null> {
  const [owner] = await sql`SELECT partner_id::text AS partner_id FROM brokers WHERE id = ${id} AND mode = 'test'`;
  if (!owner) return null;
  const broker = await brokerRow(sql, id, sql`b.mode = 'test'`);
  if (!broker) return null;
  const rows =
    await sql`${LISTING_SELECT(sql)} WHERE l.broker_id = ${id} AND l.mode = 'test' AND ${listingInVisibleStatus(sql, "l")} ORDER BY listed_at DESC, l.id DESC LIMIT ${limit}`;
  return { broker, partnerId: owner.partner_id, listings: rows.map(toListingRow) };
}
