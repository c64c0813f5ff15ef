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

/** Strict: a field the document builder does not know about is a bug, not something to index silently. */
export const INDEX_MAPPINGS = {
  dynamic: "strict",
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
    establishedAt: { type: "date" },
    broker: { properties: { serviceBrokerId: { type: "keyword" }, name: { type: "text", fields: { exact: { type: "keyword" } } } } },
    listedAt: { type: "date" },
    updatedAt: { type: "date" },
  },
} as const;
