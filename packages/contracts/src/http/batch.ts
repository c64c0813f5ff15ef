// Batch upserts (POST /partner/v1/listings/batch and /brokers/batch): many PUTs in one request, each item its own
// unit with exactly the single PUT's semantics. The envelope is checked here; each item's body is checked by the
// route with the single PUT's own schema (ListingBody, BrokerBody), so a bad item fails alone.
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { BrokerPutResponse } from "./broker.ts";
import { ErrorResponse } from "./common.ts";
import { ListingPutResponse } from "./listing.ts";
import { DryRunResponse } from "./sandbox.ts";

/** Items per batch request; the body limit (Limits.maxBodyBytes) applies as well. */
export const BATCH_MAX_ITEMS = 500;

/**
 * An item's body: any JSON, here and in the document. The route checks it with the single PUT's own schema, item
 * by item, and a body that breaks it fails that item only (its result is the PUT's 400), never the batch: so the
 * batch's schema must accept it, or a contract checker would rightly call the batch's 200 wrong.
 */
const ItemBody = (about: string) => Type.Unknown({ description: about });

/**
 * An item's external ID: any string here; the route applies the external-ID rule item by item (an ID breaking it
 * fails that item with the PUT's 400). The pattern that matches every string keeps the document's text rule off
 * it: the text rules are the item's, not the batch's.
 */
const ItemId = (about: string) =>
  Type.String({
    pattern: "^[\\s\\S]*$",
    description: `${about}; an ID breaking the external-ID rule fails its item with the PUT's 400`,
  });

const batchOf = <T extends ReturnType<typeof Type.Object>>(item: T, what: string) =>
  Type.Object(
    {
      items: Type.Array(item, {
        minItems: 1,
        maxItems: BATCH_MAX_ITEMS,
        description: `1-${BATCH_MAX_ITEMS} ${what}, each with its own external ID (no ID twice in one batch); applied in this order, and answered in this order`,
      }),
    },
    { additionalProperties: false },
  );

export const ListingBatchItem = Type.Object(
  {
    externalListingId: ItemId("The listing's external ID, as in PUT /partner/v1/listings/{externalListingId}"),
    listing: ItemBody(
      "The body of PUT /partner/v1/listings/{externalListingId} (ListingBody), checked item by item: a body that breaks that schema fails its item with the PUT's 400",
    ),
  },
  { additionalProperties: false },
);
export const ListingBatchBody = batchOf(ListingBatchItem, "listings");
export type ListingBatchBody = Static<typeof ListingBatchBody>;

export const BrokerBatchItem = Type.Object(
  {
    externalBrokerId: ItemId("The broker's external ID, as in PUT /partner/v1/brokers/{externalBrokerId}"),
    broker: ItemBody(
      "The body of PUT /partner/v1/brokers/{externalBrokerId} (BrokerBody), checked item by item: a body that breaks that schema fails its item with the PUT's 400",
    ),
  },
  { additionalProperties: false },
);
export const BrokerBatchBody = batchOf(BrokerBatchItem, "brokers");
export type BrokerBatchBody = Static<typeof BrokerBatchBody>;

const BatchCounts = Type.Object(
  {
    created: Type.Integer({ description: "Items answered 201 (with dryRun=true: wouldCreate)" }),
    updated: Type.Integer({ description: "Items that changed a record (with dryRun=true: wouldUpdate)" }),
    unchanged: Type.Integer({
      description: "Identical repeats: answered 200, nothing written or announced (with dryRun=true: noChange)",
    }),
    failed: Type.Integer({ description: "Items answered with an error (4xx, 429, 503): nothing of them was written" }),
  },
  { additionalProperties: false },
);

const itemResult = <S extends TSchema>(idName: "externalListingId" | "externalBrokerId", success: S) =>
  Type.Object(
    {
      [idName]: Type.String(),
      httpStatus: Type.Integer({
        description:
          "The status the single PUT would have answered for this item: 201, 200, or its error status (400, 404, 429, 503)",
      }),
      changed: Type.Boolean({
        description: "false for an identical repeat (and for an error or a dry run): nothing was written or announced",
      }),
      body: Type.Union([success, DryRunResponse, ErrorResponse], {
        description: "The body the single PUT would have answered",
      }),
    },
    { additionalProperties: false },
  );

export const ListingBatchResult = itemResult("externalListingId", ListingPutResponse);
export type ListingBatchResult = Static<typeof ListingBatchResult>;
export const BrokerBatchResult = itemResult("externalBrokerId", BrokerPutResponse);
export type BrokerBatchResult = Static<typeof BrokerBatchResult>;

const batchResponse = <T extends ReturnType<typeof Type.Object>>(result: T) =>
  Type.Object(
    {
      status: Type.Literal("success", {
        description: "The batch was taken: look at each result (any of them may be an error)",
      }),
      dryRun: Type.Boolean(),
      counts: BatchCounts,
      results: Type.Array(result, { description: "One per item, in request order" }),
    },
    { additionalProperties: false },
  );

export const ListingBatchResponse = batchResponse(ListingBatchResult);
export type ListingBatchResponse = Static<typeof ListingBatchResponse>;
export const BrokerBatchResponse = batchResponse(BrokerBatchResult);
export type BrokerBatchResponse = Static<typeof BrokerBatchResponse>;
