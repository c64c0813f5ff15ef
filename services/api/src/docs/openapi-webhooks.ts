// The OpenAPI 3.1 `webhooks` section: what the service POSTs to a partner's endpoint, one entry per event type,
// from the same contracts the webhooks service builds bodies with. Headers and answers follow Standard Webhooks
// (docs/webhooks.md).
import { SECRET_ROTATION_OVERLAP_MS, WEBHOOK_EVENT_DATA, type DeliveredEventType } from "@pss/contracts";

const HEADERS = [
  {
    name: "webhook-id",
    description: "The delivery's ID: identical on every attempt of the delivery; a receiver drops a repeat by it",
  },
  {
    name: "webhook-timestamp",
    description: "When this attempt was signed, in Unix seconds; refuse attempts older than a few minutes (replays)",
  },
  {
    name: "webhook-signature",
    description: `Space-separated \`v1,<base64 HMAC-SHA256>\` of \`{webhook-id}.{webhook-timestamp}.{raw body}\` keyed with the endpoint's secret (\`whsec_<base64>\`, base64-decoded). For ${SECRET_ROTATION_OVERLAP_MS / 3_600_000} hours after a rotation there are two: one per secret`,
  },
];

export function webhookEventDocs(plain: (schema: unknown) => Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    (Object.entries(WEBHOOK_EVENT_DATA) as [DeliveredEventType, (typeof WEBHOOK_EVENT_DATA)[DeliveredEventType]][]).map(
      ([type, about]) => [
        type,
        {
          post: {
            summary: about.summary,
            description:
              "Sent at least once to every enabled endpoint subscribed to this type, in no particular order: data.version only grows per record, so drop an event older than one you applied. Attempts time out after 10 s and are retried (immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h, with jitter; never earlier than a Retry-After asks).",
            parameters: HEADERS.map((h) => ({
              name: h.name,
              in: "header",
              required: true,
              description: h.description,
              schema: { type: "string" },
            })),
            requestBody: {
              required: true,
              content: {
                "application/json": {
                  schema: {
                    type: "object",
                    required: ["type", "timestamp", "data"],
                    properties: {
                      type: { const: type },
                      timestamp: { type: "string", format: "date-time", description: "When the fact happened" },
                      data: plain(about.data),
                    },
                  },
                },
              },
            },
            responses: {
              "2XX": { description: "Received: the delivery is done (the body is not read)" },
              "410": {
                description:
                  "Gone: the endpoint is disabled at once and nothing more is sent until a PUT with enabled: true",
              },
              default: {
                description:
                  "Any other answer, a timeout or a connection failure: the attempt is retried on the schedule",
              },
            },
          },
        },
      ],
    ),
  );
}
