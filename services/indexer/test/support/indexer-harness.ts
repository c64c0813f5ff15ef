// Starts the real indexer in-process against the test servers, under a unique consumer group and a unique
// alias (other engineers' tests share Kafka and OpenSearch), starting at the current end of the topics so
// it indexes what the test does rather than every event ever published.
import { Client } from "@opensearch-project/opensearch";
import { Topics } from "@pss/contracts";
import { createLogger, silentLogger, type Logger } from "@pss/service-kit";
import { Kafka, logLevel } from "kafkajs";
import postgres from "postgres";
import { startGroupAtEnd } from "../../../../test/support/consumer-groups.ts";
import { testUrls, uniqueName } from "../../../../test/support/env.ts";
import { createIndexer, type Indexer } from "../../src/indexer.ts";
import { createDeterministicRewriter, type DescriptionRewriter } from "../../src/rewriting/description-rewriter.ts";

export interface IndexerHarness {
  indexer: Indexer;
  alias: string;
  groupId: string;
  sql: postgres.Sql;
  kafka: Kafka;
  /** A client to the real OpenSearch (whatever URL the indexer was given). */
  opensearch: Client;
  stop(): Promise<void>;
}

export interface IndexerOptions {
  alias?: string;
  groupId?: string;
  /** Point the indexer at another OpenSearch URL, e.g. a closed port to simulate an outage. */
  opensearchUrl?: string;
  rewriter?: DescriptionRewriter;
  logger?: Logger;
  /** Start at the current end of the topics (default) or from the group's committed offsets. */
  startAtEnd?: boolean;
  /** Index only these partners' events (a set the test may fill later); absent = every event on the topics. */
  onlyPartners?: ReadonlySet<string>;
}

export const newAlias = () => uniqueName("test-listings");

export async function startIndexer(opts: IndexerOptions = {}): Promise<IndexerHarness> {
  const urls = testUrls();
  const alias = opts.alias ?? newAlias();
  const groupId = opts.groupId ?? uniqueName("indexer-test");
  const logger = opts.logger ?? (process.env.TEST_LOGS ? createLogger({ service: "indexer-test" }) : silentLogger);
  const sql = postgres(urls.DATABASE_URL, { max: 5, onnotice: () => {} });
  const kafka = new Kafka({
    clientId: uniqueName("indexer-test"),
    brokers: urls.KAFKA_BROKERS.split(","),
    logLevel: logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 200 },
  });
  const indexerClient = new Client({
    node: opts.opensearchUrl ?? urls.OPENSEARCH_URL,
    requestTimeout: 5000,
    maxRetries: 0,
  });
  const opensearch = new Client({ node: urls.OPENSEARCH_URL });
  if (opts.startAtEnd !== false)
    await startGroupAtEnd(kafka, groupId, [Topics.listingEvents.name, Topics.brokerEvents.name]);
  const indexer = createIndexer({
    kafka,
    sql,
    opensearch: indexerClient,
    alias,
    groupId,
    rewriter: opts.rewriter ?? createDeterministicRewriter(),
    logger,
    initialBackoffMs: 100,
    maxBackoffMs: 1000,
    onlyPartners: opts.onlyPartners,
  });
  await indexer.start();
  return {
    indexer,
    alias,
    groupId,
    sql,
    kafka,
    opensearch,
    async stop() {
      await indexer.stop();
      await sql.end({ timeout: 5 });
      await indexerClient.close();
      await opensearch.close();
    },
  };
}

/** Deletes the test's index (and with it the alias). */
export async function deleteSearchIndex(alias: string): Promise<void> {
  const client = new Client({ node: testUrls().OPENSEARCH_URL });
  await client.indices.delete({ index: `${alias}-v*` }).catch(() => {});
  await client.close();
}

export async function until<T>(
  what: string,
  check: () => Promise<T | null | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(50);
  }
}

/** The raw document as OpenSearch stores it (real-time get: no refresh needed), or null. */
export async function rawDocument(client: Client, alias: string, id: number): Promise<Record<string, any> | null> {
  try {
    const res = await client.get({ index: alias, id: String(id) });
    return (res.body as { _source: Record<string, any> })._source;
  } catch (err) {
    if ((err as { meta?: { statusCode?: number } }).meta?.statusCode === 404) return null;
    throw err;
  }
}

/** Waits until the indexer has applied the listing's current version; returns its recorded state. */
export async function indexedState(
  sql: postgres.Sql,
  id: number,
  timeoutMs = 20_000,
): Promise<{ state: string; version: number }> {
  return until(
    `listing ${id} to be indexed at its current version`,
    async () => {
      const [row] = await sql`SELECT index_state, indexed_version, version FROM listings WHERE id = ${id}`;
      return row && row.index_state !== "pending" && row.indexed_version === row.version
        ? { state: row.index_state as string, version: row.version as number }
        : null;
    },
    timeoutMs,
  );
}
