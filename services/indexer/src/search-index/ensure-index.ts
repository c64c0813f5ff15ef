// Creates the versioned index with its alias when the alias does not exist yet. Safe when several indexers
// start at once: the index is created with the alias in one request, and "already exists" counts as done.
// Indexes created earlier with a strict mapping are relaxed in place so documents with new fields are not refused,
// and fields added to the mappings since an index was created are added to it in place.
import type { Client } from "@opensearch-project/opensearch";
import { openSearchBody, type Logger } from "@pss/service-kit";
import { INDEX_DYNAMIC, INDEX_MAPPINGS, INDEX_SETTINGS, versionedIndexName } from "./index-definition.ts";

export async function ensureSearchIndex(client: Client, alias: string, logger: Logger): Promise<string> {
  const expected = versionedIndexName(alias);
  const current = await aliasTargets(client, alias);
  if (current.length > 0) {
    // `reindex` builds `<alias>-v<N>-<timestamp>`: the same version under another name.
    if (!current.some((index) => index === expected || index.startsWith(`${expected}-`)))
      logger.warn("search alias points at another index version; re-index to move it", { alias, current, expected });
    await tolerateNewFields(client, current, logger);
    return current[0]!;
  }
  try {
    await client.indices.create({
      index: expected,
      body: openSearchBody({
        settings: INDEX_SETTINGS,
        mappings: INDEX_MAPPINGS,
        aliases: { [alias]: { is_write_index: true } },
      }),
    });
    logger.info("search index created", { alias, index: expected });
  } catch (err) {
    const type = (err as { meta?: { body?: { error?: { type?: string } } } }).meta?.body?.error?.type;
    if (type !== "resource_already_exists_exception") throw err;
    // Created by another instance, or left without its alias: (re)attach the alias.
    await client.indices.putAlias({ index: expected, name: alias });
    await tolerateNewFields(client, [expected], logger);
  }
  return expected;
}

/**
 * Indexes created with `dynamic: "strict"` (before the tolerant mapping) refuse any document with a field they
 * do not name. `dynamic` is one of the few mapping parameters put_mapping may change on an existing index, so
 * they are relaxed where they stand: no re-index, no new index version.
 * A top-level field the mappings gained later (e.g. `financingAvailable`) may be added to an existing index the
 * same way. Documents written before carry no value for it until they are written again (any change of the
 * listing, or `admin reindex`); filters treat a missing value as "not offered".
 */
async function tolerateNewFields(client: Client, indexes: string[], logger: Logger): Promise<void> {
  const res = await client.indices.getMapping({ index: indexes.join(",") });
  for (const [index, entry] of Object.entries(
    res.body as Record<string, { mappings?: { dynamic?: unknown; properties?: Record<string, unknown> } }>,
  )) {
    if (String(entry.mappings?.dynamic) === "strict") {
      await client.indices.putMapping({ index, body: openSearchBody({ dynamic: INDEX_DYNAMIC }) });
      logger.info("search index mapping relaxed: unknown fields are kept, not refused", {
        index,
        dynamic: INDEX_DYNAMIC,
      });
    }
    const existing = entry.mappings?.properties ?? {};
    const missing = Object.fromEntries(
      Object.entries(INDEX_MAPPINGS.properties).filter(([field]) => !(field in existing)),
    );
    if (Object.keys(missing).length === 0) continue;
    await client.indices.putMapping({ index, body: { properties: missing } });
    logger.info("search index mapping extended with new fields", { index, fields: Object.keys(missing) });
  }
}

/** The indices behind an alias; none when it does not exist. */
export async function aliasTargets(client: Client, alias: string): Promise<string[]> {
  try {
    const res = await client.indices.getAlias({ name: alias });
    return Object.keys(res.body as Record<string, unknown>);
  } catch (err) {
    if ((err as { meta?: { statusCode?: number } }).meta?.statusCode === 404) return [];
    throw err;
  }
}

/** Memoized ensureSearchIndex that tries again on the next call after a failure (OpenSearch down at boot). */
export function createIndexEnsurer(client: Client, alias: string, logger: Logger): () => Promise<void> {
  let done: Promise<void> | null = null;
  return () =>
    (done ??= ensureSearchIndex(client, alias, logger).then(
      () => undefined,
      (err) => {
        done = null;
        throw err;
      },
    ));
}
