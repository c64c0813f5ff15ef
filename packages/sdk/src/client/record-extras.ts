// Change history of a record and the test-mode helpers (docs/sandbox.md): success bodies, PssApiError otherwise.
import type { Client } from "openapi-fetch";
import type { paths } from "../generated/api.ts";
import type {
  BrokerHistoryEntry,
  ListingHistoryEntry,
  SimulatedLeadAccepted,
  SimulatedLeadBody,
  TestDataDeleted,
} from "../types.ts";
import { type CallOptions, headersOf, limitOf, pages, unwrap } from "./answers.ts";

export interface HistoryOptions extends CallOptions {
  /** Entries per page, 1-500 (default 100). */
  limit?: number;
}

export function createRecordExtras(api: Client<paths>) {
  return {
    /** Every version of the listing, newest first: when, which key and request, and each changed field. */
    listingHistory(externalListingId: string, opts?: HistoryOptions): AsyncGenerator<ListingHistoryEntry> {
      return pages<ListingHistoryEntry>(
        (cursor) =>
          api.GET("/partner/v1/listings/{externalListingId}/history", {
            params: { path: { externalListingId }, query: { limit: limitOf(opts?.limit), cursor } },
            headers: headersOf(opts),
            signal: opts?.signal,
          }),
        opts?.signal,
      );
    },
    /** Every version of the broker, newest first. */
    brokerHistory(externalBrokerId: string, opts?: HistoryOptions): AsyncGenerator<BrokerHistoryEntry> {
      return pages<BrokerHistoryEntry>(
        (cursor) =>
          api.GET("/partner/v1/brokers/{externalBrokerId}/history", {
            params: { path: { externalBrokerId }, query: { limit: limitOf(opts?.limit), cursor } },
            headers: headersOf(opts),
            signal: opts?.signal,
          }),
        opts?.signal,
      );
    },
    testMode: {
      /** A simulated buyer inquiry on one of your test listings (a test key only): counted and e-mailed as a real one. */
      async createLead(externalListingId: string, lead: SimulatedLeadBody = {}, opts?: CallOptions) {
        return unwrap<SimulatedLeadAccepted>(
          await api.POST("/partner/v1/test/listings/{externalListingId}/leads", {
            params: { path: { externalListingId } },
            body: lead,
            headers: headersOf(opts),
            signal: opts?.signal,
          }),
        );
      },
      /** Deletes every test record of your partner (a test key only); live data is never touched. */
      async purge(opts?: CallOptions) {
        return unwrap<TestDataDeleted>(
          await api.DELETE("/partner/v1/test-data", { headers: headersOf(opts), signal: opts?.signal }),
        );
      },
    },
  };
}
