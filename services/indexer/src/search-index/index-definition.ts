// The versioned index behind the alias. Changing the mappings means a new INDEX_VERSION: create the new index,
// fill it (re-index from PostgreSQL or _reindex), then move the alias in one step; readers never notice.
export const INDEX_VERSION = 1;

export function versionedIndexName(alias: string, version = INDEX_VERSION): string {
  return `${alias}-v${version}`;
}

const exactText = { type: "keyword", normalizer: "folded" } as const;
const money = { type: "double" } as const;

export const INDEX_SETTINGS = {
  number_of_shards: 1,
  // One replica where a second node exists; none on a single development node (keeps it green).
  auto_expand_replicas: "0-1",
  // Newly indexed listings become searchable within half a second (the PUT-to-searchable target is 2 s).
  refresh_interval: "500ms",
  analysis: {
    // Filters match "texas", "Texas" and "TEXAS" alike; the stored value keeps the partner's spelling.
    normalizer: { folded: { type: "custom", filter: ["lowercase", "asciifolding"] } },
  },
};

/**
 * `dynamic: false`: a field the mapping does not name is kept in _source but not indexed, instead of failing
 * the whole document ("strict"). A newer indexer that adds a field then cannot get documents refused by an
 * index created by an older one; fields become searchable only through a mapping change. The setting is
 * compatible with existing indexes and applied in place at startup (ensure-index.ts): no new index version.
 */
export const INDEX_DYNAMIC = false;

export const INDEX_MAPPINGS = {
  dynamic: INDEX_DYNAMIC,
  properties: {
    serviceListingId: { type: "long" },
    title: { type: "text", analyzer: "english" },
    description: { type: "text", analyzer: "english" },
    businessType: exactText,
    status: { type: "keyword" },
    underContract: { type: "boolean" },
    location: {
      properties: {
        streetAddress1: { type: "keyword", index: false },
        postalCode: { type: "keyword" },
        city: exactText,
        state: exactText,
        country: exactText,
        visibility: { type: "keyword" },
      },
    },
    financials: { properties: { askingPrice: money, revenue: money, sde: money, inventory: money, ffande: money } },
    // Added after version 1 was created: ensure-index.ts adds them to existing indexes in place (documents written
    // before carry them once written again, or after `admin reindex`).
    financingAvailable: { type: "boolean" },
    sbaPrequalified: { type: "boolean" },
    realEstateIncluded: { type: "boolean" },
    geo: { type: "geo_point" },
    priceReducedAt: { type: "date" },
    establishedAt: { type: "date" },
    broker: {
      properties: {
        serviceBrokerId: { type: "keyword" },
        name: { type: "text", fields: { exact: { type: "keyword" } } },
      },
    },
    listedAt: { type: "date" },
    updatedAt: { type: "date" },
  },
} as const;
