import { expect, test } from "bun:test";
import {
  DeliveredEventTypeSchema,
  PING_EVENT,
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_EVENT_TYPES,
  WebhookDeliveryStatusSchema,
  WebhookEventTypeSchema,
} from "./webhooks.ts";

const values = (schema: { anyOf: { const: string }[] }) => schema.anyOf.map((s) => s.const);

test("the event type schemas list exactly the event types (spelled out for their static types)", () => {
  expect(values(WebhookEventTypeSchema)).toEqual([...WEBHOOK_EVENT_TYPES]);
  expect(values(DeliveredEventTypeSchema)).toEqual([...WEBHOOK_EVENT_TYPES, PING_EVENT]);
  expect(values(WebhookDeliveryStatusSchema)).toEqual([...WEBHOOK_DELIVERY_STATUSES]);
});
