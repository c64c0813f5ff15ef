// Webhook endpoints and deliveries (docs/webhooks.md): each call returns the success body and throws a PssApiError
// for an error answer, like the rest of the client.
import type { Client } from "openapi-fetch";
import type { paths } from "../generated/api.ts";
import type {
  WebhookDelivery,
  WebhookDeliveryQuery,
  WebhookEndpointBody,
  WebhookEndpointPutResponse,
  WebhookEndpointRecord,
  WebhookRecoverQueued,
  WebhookReplayBody,
  WebhookReplayQueued,
  WebhookRetryQueued,
  WebhookSecretRotation,
  WebhookTestQueued,
} from "../types.ts";
import { type CallOptions, headersOf, iso, limitOf, pages, unwrap } from "./answers.ts";

export interface PageOptions extends CallOptions {
  /** Page size, 1-500 (default 100). */
  limit?: number;
}

export type DeliveryFilter = Omit<WebhookDeliveryQuery, "limit" | "cursor"> & PageOptions;

export function createWebhooksClient(api: Client<paths>) {
  const path = (endpointId: string) => ({ path: { endpointId } });
  return {
    /**
     * Creates or updates the endpoint with your ID (PUT). A create answers 201 with `secret`, the signing secret,
     * shown only then: store it to verify deliveries (verifyWebhook). An update answers 200 without it.
     */
    async put(endpointId: string, body: WebhookEndpointBody, opts?: CallOptions) {
      const answer = await api.PUT("/partner/v1/webhook-endpoints/{endpointId}", {
        params: path(endpointId),
        body,
        headers: headersOf(opts),
        signal: opts?.signal,
      });
      const result = unwrap<WebhookEndpointPutResponse>(answer);
      return { ...result, created: result.httpStatus === 201 };
    },
    async get(endpointId: string, opts?: CallOptions): Promise<WebhookEndpointRecord> {
      const answer = await api.GET("/partner/v1/webhook-endpoints/{endpointId}", {
        params: path(endpointId),
        headers: headersOf(opts),
        signal: opts?.signal,
      });
      return unwrap<{ endpoint: WebhookEndpointRecord }>(answer).endpoint;
    },
    /** Every endpoint of this key's partner and mode, following nextCursor to the end. */
    list(opts?: PageOptions): AsyncGenerator<WebhookEndpointRecord> {
      return pages<WebhookEndpointRecord>(
        (cursor) =>
          api.GET("/partner/v1/webhook-endpoints", {
            params: { query: { limit: limitOf(opts?.limit), cursor } },
            headers: headersOf(opts),
            signal: opts?.signal,
          }),
        opts?.signal,
      );
    },
    /** Deletes the endpoint; its queued deliveries are not sent. */
    async delete(endpointId: string, opts?: CallOptions): Promise<void> {
      const answer = await api.DELETE("/partner/v1/webhook-endpoints/{endpointId}", {
        params: path(endpointId),
        headers: headersOf(opts),
        signal: opts?.signal,
      });
      unwrap(answer);
    },
    /** A new signing secret; the previous one keeps verifying for the overlap the answer states. */
    async rotateSecret(endpointId: string, opts?: CallOptions) {
      return unwrap<WebhookSecretRotation>(
        await api.POST("/partner/v1/webhook-endpoints/{endpointId}/rotate-secret", {
          params: path(endpointId),
          headers: headersOf(opts),
          signal: opts?.signal,
        }),
      );
    },
    /** Queues a `webhook.test` delivery to the endpoint (202). */
    async test(endpointId: string, opts?: CallOptions) {
      return unwrap<WebhookTestQueued>(
        await api.POST("/partner/v1/webhook-endpoints/{endpointId}/test", {
          params: path(endpointId),
          headers: headersOf(opts),
          signal: opts?.signal,
        }),
      );
    },
    /** Re-enables a disabled endpoint and sends again its deliveries that failed since `since` (202). */
    async recover(endpointId: string, since: string | Date, opts?: CallOptions) {
      return unwrap<WebhookRecoverQueued>(
        await api.POST("/partner/v1/webhook-endpoints/{endpointId}/recover", {
          params: { ...path(endpointId), query: { since: iso(since) ?? "" } },
          headers: headersOf(opts),
          signal: opts?.signal,
        }),
      );
    },
    /** Sends the endpoint the events of a change-feed or time range again (202; bounded per endpoint and day). */
    async replay(endpointId: string, range: WebhookReplayBody, opts?: CallOptions) {
      return unwrap<WebhookReplayQueued>(
        await api.POST("/partner/v1/webhook-endpoints/{endpointId}/replay", {
          params: path(endpointId),
          body: range,
          headers: headersOf(opts),
          signal: opts?.signal,
        }),
      );
    },
    deliveries: {
      /** Deliveries, newest first, filtered by endpoint, status or event type, following nextCursor to the end. */
      list(filter?: DeliveryFilter): AsyncGenerator<WebhookDelivery> {
        const { signal, requestId, limit, ...query } = filter ?? {};
        return pages<WebhookDelivery>(
          (cursor) =>
            api.GET("/partner/v1/webhook-deliveries", {
              params: { query: { ...query, limit: limitOf(limit), cursor } },
              headers: headersOf({ requestId }),
              signal,
            }),
          signal,
        );
      },
      /** Sends a failed delivery again now (202). */
      async retry(deliveryId: string, opts?: CallOptions) {
        return unwrap<WebhookRetryQueued>(
          await api.POST("/partner/v1/webhook-deliveries/{deliveryId}/retry", {
            params: { path: { deliveryId } },
            headers: headersOf(opts),
            signal: opts?.signal,
          }),
        );
      },
    },
  };
}

export type WebhooksClient = ReturnType<typeof createWebhooksClient>;
