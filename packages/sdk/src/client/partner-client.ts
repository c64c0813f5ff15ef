// The partner API client: the typed openapi-fetch client (every operation of the document) plus the calls
// partners make most, which return the success body and throw a PssApiError for any error answer.
import createClient, { type Client } from "openapi-fetch";
import type { paths } from "../generated/api.ts";
import type {
  BrokerBatchItem,
  BrokerBatchResponse,
  BrokerBody,
  BrokerPutResponse,
  BrokerRecord,
  DryRunResult,
  HealthResponse,
  FeedEvent,
  FeedPage,
  ListingBatchItem,
  ListingBatchResponse,
  ListingBody,
  ListingPutResponse,
  ListingRecord,
  ListingReport,
  ListingStats,
  OfficeLeadCount,
  OrganizationLeadCount,
} from "../types.ts";
import { type CallOptions, headersOf, iso, pages, unwrap } from "./answers.ts";
import { PssError } from "./errors.ts";
import { createRecordExtras } from "./record-extras.ts";
import { createWebhooksClient } from "./webhooks-client.ts";

export type { CallOptions } from "./answers.ts";
import { createRetryingFetch, type FetchLike, type RetryOptions } from "./retrying-fetch.ts";

export const SDK_VERSION = "0.1.0";

export interface PartnerClientOptions {
  /** The API root, e.g. https://api.example.com (paths start with /partner/v1). */
  baseUrl: string;
  apiKey: string;
  /** Retry policy (see RetryOptions); `false` sends every request once. */
  retry?: RetryOptions | false;
  /** The transport under the retries (default: globalThis.fetch). */
  fetch?: FetchLike;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
}

export interface PutOptions extends CallOptions {
  /** Validate and compare only: nothing is stored (the API's `?dryRun=true`). */
  dryRun?: boolean;
  /** The body already serialised (`JSON.stringify(body)`), sent as it is: saves serialising it again. */
  json?: string;
}

/** A stored PUT: `created` tells a 201 from a 200 (updated, or an identical repeat the API stored as a no-op). */
export type BrokerPutResult = BrokerPutResponse & { httpStatus: 200 | 201; created: boolean; requestId: string | null };
export type ListingPutResult = ListingPutResponse & {
  httpStatus: 200 | 201;
  created: boolean;
  requestId: string | null;
};
export type DryRunPutResult = DryRunResult & { httpStatus: 200; requestId: string | null };

export interface BatchOptions extends CallOptions {
  /** Check and compare every item only: nothing is stored (the API's `?dryRun=true`). */
  dryRun?: boolean;
}

/** A batch's answer: `results[i]` is the answer the PUT of `items[i]` would have got (any of them may be an error). */
export type ListingBatchAnswer = ListingBatchResponse & { httpStatus: number; requestId: string | null };
export type BrokerBatchAnswer = BrokerBatchResponse & { httpStatus: number; requestId: string | null };

/** Items per batch request the API takes (BATCH_MAX_ITEMS); the request body limit applies as well. */
export const MAX_BATCH_ITEMS = 500;

export interface EventsOptions extends CallOptions {
  /** The last sequence number already read (a page's nextCursor); absent or 0: from the oldest event kept. */
  after?: number | string;
  /** Events per page, 1-1000 (default 100). */
  limit?: number;
}

export interface ListOptions extends CallOptions {
  /** Page size, 1-500 (default 100). */
  limit?: number;
  /** Only records updated at or after this instant. */
  updatedSince?: string | Date;
}

export interface LeadCountOptions extends CallOptions {
  startDate?: string | Date;
  endDate?: string | Date;
}

const dryRunQuery = (o: PutOptions | undefined) => (o?.dryRun ? { dryRun: "true" as const } : undefined);

const serializerFor = (o: PutOptions | undefined) => (o?.json === undefined ? undefined : () => o.json);

/** A dry-run must be answered as one: an older API without dry-run support would have stored the record. */
function putResult<T extends { httpStatus: number }>(
  result: T,
  opts: PutOptions | undefined,
): T & { created: boolean } {
  if (opts?.dryRun && (result as { dryRun?: unknown }).dryRun !== true) {
    throw new PssError(
      `the API does not support dry-run: it answered ${result.httpStatus} as for a real PUT, so the record was stored`,
    );
  }
  return { ...result, created: result.httpStatus === 201 };
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}

export function createPartnerClient(options: PartnerClientOptions) {
  const transport: FetchLike = options.fetch ?? ((request) => fetch(request));
  const fetchWithRetries = options.retry === false ? transport : createRetryingFetch(transport, options.retry ?? {});
  const api: Client<paths> = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    fetch: fetchWithRetries,
    headers: {
      authorization: `Bearer ${options.apiKey}`,
      "user-agent": `pss-partner-sdk/${SDK_VERSION}`,
      ...options.headers,
    },
  });

  async function putBroker(
    externalBrokerId: string,
    body: BrokerBody,
    opts: PutOptions & { dryRun: true },
  ): Promise<DryRunPutResult>;
  async function putBroker(externalBrokerId: string, body: BrokerBody, opts?: PutOptions): Promise<BrokerPutResult>;
  async function putBroker(
    externalBrokerId: string,
    body: BrokerBody,
    opts?: PutOptions,
  ): Promise<BrokerPutResult | DryRunPutResult> {
    const answer = await api.PUT("/partner/v1/brokers/{externalBrokerId}", {
      params: { path: { externalBrokerId }, query: dryRunQuery(opts) },
      body,
      bodySerializer: serializerFor(opts),
      headers: headersOf(opts),
      signal: opts?.signal,
    });
    return putResult(unwrap<BrokerPutResponse>(answer), opts) as BrokerPutResult | DryRunPutResult;
  }

  async function putListing(
    externalListingId: string,
    body: ListingBody,
    opts: PutOptions & { dryRun: true },
  ): Promise<DryRunPutResult>;
  async function putListing(externalListingId: string, body: ListingBody, opts?: PutOptions): Promise<ListingPutResult>;
  async function putListing(
    externalListingId: string,
    body: ListingBody,
    opts?: PutOptions,
  ): Promise<ListingPutResult | DryRunPutResult> {
    const answer = await api.PUT("/partner/v1/listings/{externalListingId}", {
      params: { path: { externalListingId }, query: dryRunQuery(opts) },
      body,
      bodySerializer: serializerFor(opts),
      headers: headersOf(opts),
      signal: opts?.signal,
    });
    return putResult(unwrap<ListingPutResponse>(answer), opts) as ListingPutResult | DryRunPutResult;
  }

  /** A batch must be answered as a dry run when asked for one, like a single PUT (see putResult). */
  function batchResult<T extends { dryRun: boolean; httpStatus: number }>(
    result: T,
    opts: BatchOptions | undefined,
  ): T {
    if (opts?.dryRun && result.dryRun !== true)
      throw new PssError(
        `the API did not answer the batch as a dry run (${result.httpStatus}), so its items were stored`,
      );
    return result;
  }

  /**
   * Creates or updates up to 500 listings in one request (POST /partner/v1/listings/batch). Each item is its own
   * unit with exactly the single PUT's semantics; the answer lists one result per item, in order. Throws
   * PssApiError only when the batch itself is refused (not JSON, over the limits, an ID given twice: nothing
   * was stored); an item's error is in its result.
   */
  async function upsertListings(items: ListingBatchItem[], opts?: BatchOptions): Promise<ListingBatchAnswer> {
    const answer = await api.POST("/partner/v1/listings/batch", {
      params: { query: dryRunQuery(opts) },
      body: { items },
      headers: headersOf(opts),
      signal: opts?.signal,
    });
    return batchResult(unwrap<ListingBatchResponse>(answer), opts);
  }

  /** Creates or updates up to 500 brokers in one request (POST /partner/v1/brokers/batch); as upsertListings. */
  async function upsertBrokers(items: BrokerBatchItem[], opts?: BatchOptions): Promise<BrokerBatchAnswer> {
    const answer = await api.POST("/partner/v1/brokers/batch", {
      params: { query: dryRunQuery(opts) },
      body: { items },
      headers: headersOf(opts),
      signal: opts?.signal,
    });
    return batchResult(unwrap<BrokerBatchResponse>(answer), opts);
  }

  /** One page of the change feed after a sequence number. */
  async function eventsPage(opts?: EventsOptions) {
    const answer = await api.GET("/partner/v1/events", {
      params: {
        query: {
          after: opts?.after === undefined ? undefined : String(opts.after),
          limit: opts?.limit === undefined ? undefined : String(opts.limit),
        },
      },
      headers: headersOf(opts),
      signal: opts?.signal,
    });
    return unwrap<FeedPage>(answer);
  }

  const pageQuery = (o: ListOptions | undefined, cursor: string | undefined) => ({
    limit: o?.limit === undefined ? undefined : String(o.limit),
    updatedSince: iso(o?.updatedSince),
    cursor,
  });

  return {
    /** The typed openapi-fetch client: any operation of the document, answers as `{ data, error, response }`. */
    api,
    /** Checks the URL and the key (GET /partner/v1/health). */
    async health(opts?: CallOptions): Promise<HealthResponse> {
      return unwrap<HealthResponse>(
        await api.GET("/partner/v1/health", { headers: headersOf(opts), signal: opts?.signal }),
      );
    },
    putBroker,
    putListing,
    listings: { upsertMany: upsertListings },
    /**
     * The change feed (GET /partner/v1/events): `page` reads one page after a sequence number; pass its
     * `nextCursor` as `after` next time (the same cursor comes back while nothing new is there).
     */
    events: {
      page: eventsPage,
      /**
       * Every event after `after`, in sequence order, then waits for new ones (polling every `pollMs`, default 1 s)
       * until `signal` aborts: `for await (const e of client.events.follow({ after: saved })) { …; saved = e.sequence }`.
       * A cursor older than the retention throws the API's 410 (PssApiError): reconcile, then follow from the
       * sequence it names.
       */
      async *follow(opts?: EventsOptions & { pollMs?: number }): AsyncGenerator<FeedEvent> {
        let after: number | string = opts?.after ?? "0";
        for (;;) {
          if (opts?.signal?.aborted) return;
          const page = await eventsPage({ ...opts, after });
          yield* page.results;
          after = page.nextCursor;
          if (page.results.length === 0) await sleep(opts?.pollMs ?? 1000, opts?.signal);
        }
      },
    },
    /** Webhook endpoints (create, rotate, test, recover, replay) and their deliveries (list, retry). */
    webhooks: createWebhooksClient(api),
    ...createRecordExtras(api),
    brokers: { upsertMany: upsertBrokers },
    async getBroker(externalBrokerId: string, opts?: CallOptions): Promise<BrokerRecord> {
      const answer = await api.GET("/partner/v1/brokers/{externalBrokerId}", {
        params: { path: { externalBrokerId } },
        headers: headersOf(opts),
        signal: opts?.signal,
      });
      return unwrap<{ broker: BrokerRecord }>(answer).broker;
    },
    async getListing(externalListingId: string, opts?: CallOptions): Promise<ListingRecord> {
      const answer = await api.GET("/partner/v1/listings/{externalListingId}", {
        params: { path: { externalListingId } },
        headers: headersOf(opts),
        signal: opts?.signal,
      });
      return unwrap<{ listing: ListingRecord }>(answer).listing;
    },
    /** All of the partner's brokers (reconciliation), following nextCursor to the end. */
    listBrokers(opts?: ListOptions): AsyncGenerator<BrokerRecord> {
      return pages<BrokerRecord>(
        (cursor) =>
          api.GET("/partner/v1/brokers", {
            params: { query: pageQuery(opts, cursor) },
            headers: headersOf(opts),
            signal: opts?.signal,
          }),
        opts?.signal,
      );
    },
    /** All of the partner's listings (reconciliation), following nextCursor to the end. */
    listListings(opts?: ListOptions): AsyncGenerator<ListingRecord> {
      return pages<ListingRecord>(
        (cursor) =>
          api.GET("/partner/v1/listings", {
            params: { query: pageQuery(opts, cursor) },
            headers: headersOf(opts),
            signal: opts?.signal,
          }),
        opts?.signal,
      );
    },
    /** The listing's processing report: each step with its time and outcome, and the overall state with reasons. */
    async getListingReport(externalListingId: string, opts?: CallOptions): Promise<ListingReport> {
      const answer = await api.GET("/partner/v1/listings/{externalListingId}/report", {
        params: { path: { externalListingId } },
        headers: headersOf(opts),
        signal: opts?.signal,
      });
      return unwrap<{ report: ListingReport }>(answer).report;
    },
    /** The listing's buyer statistics per UTC day (startDate inclusive, endDate exclusive, as for lead counts). */
    async getListingStats(externalListingId: string, opts?: LeadCountOptions): Promise<ListingStats> {
      const answer = await api.GET("/partner/v1/listings/{externalListingId}/stats", {
        params: {
          path: { externalListingId },
          query: { startDate: iso(opts?.startDate), endDate: iso(opts?.endDate) },
        },
        headers: headersOf(opts),
        signal: opts?.signal,
      });
      return unwrap<ListingStats>(answer);
    },
    async officeLeadCount(officeId: number, opts?: LeadCountOptions): Promise<OfficeLeadCount> {
      const answer = await api.GET("/partner/v1/offices/{officeId}/leads/count", {
        params: {
          path: { officeId: String(officeId) },
          query: { startDate: iso(opts?.startDate), endDate: iso(opts?.endDate) },
        },
        headers: headersOf(opts),
        signal: opts?.signal,
      });
      return unwrap<OfficeLeadCount>(answer);
    },
    async organizationLeadCount(organizationId: number, opts?: LeadCountOptions): Promise<OrganizationLeadCount> {
      const answer = await api.GET("/partner/v1/organizations/{organizationId}/leads/count", {
        params: {
          path: { organizationId: String(organizationId) },
          query: { startDate: iso(opts?.startDate), endDate: iso(opts?.endDate) },
        },
        headers: headersOf(opts),
        signal: opts?.signal,
      });
      return unwrap<OrganizationLeadCount>(answer);
    },
  };
}

export type PartnerClient = ReturnType<typeof createPartnerClient>;
