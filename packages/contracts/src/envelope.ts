import { Type, type Static, type TSchema } from "@sinclair/typebox";

export const AggregateType = Type.Union([Type.Literal("listing"), Type.Literal("broker"), Type.Literal("lead")]);

/**
 * Every Kafka message value. `version` increases by one with every change of the aggregate, so a consumer
 * can drop an event whose version is not newer than what it already applied.
 */
export const EventEnvelopeHeader = {
  eventId: Type.String({ format: "uuid" }),
  type: Type.String(),
  aggregateType: AggregateType,
  aggregateId: Type.String(),
  version: Type.Integer({ minimum: 1 }),
  partnerId: Type.String(),
  /**
   * "live" or "test" (docs/sandbox.md): the mode of the record the event is about. Absent on events written
   * before test mode existed (they are live). A string, not an enum, so a new value never dead-letters events at
   * consumers; read it with eventMode(), which treats anything but "live" as not live.
   */
  mode: Type.Optional(Type.String({ description: "live or test" })),
  occurredAt: Type.String({ format: "date-time" }),
};

/**
 * Tolerant reader: a consumer checks the fields it uses and ignores the rest, so a producer that adds a field
 * (a new API version) never dead-letters events at consumers not yet upgraded. Payload schemas follow the same
 * rule: each declares `additionalProperties: true`. Only partner input is strict.
 */
export const EventEnvelope = <T extends TSchema>(payload: T) =>
  Type.Object({ ...EventEnvelopeHeader, payload }, { additionalProperties: true });

export const AnyEventEnvelope = EventEnvelope(Type.Unknown());
export type AnyEventEnvelope = Static<typeof AnyEventEnvelope>;
