// How an event type is declared (docs/events.md): its name, its version, the topic it goes to, which aggregate
// it is about, and its payload twice: the producer form (strict: what our own code writes, nothing more) and the
// reader form derived from it (tolerant: fields a newer producer adds are ignored, never dead-lettered).
import { Kind, OptionalKind, Type, type Static, type TObject, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { RecordMode } from "../http/common.ts";
import type { TopicSpec } from "../topics.ts";
import { registerFormats } from "../formats.ts";
import { newEventId } from "./event-id.ts";

export type EventAggregate = "listing" | "broker" | "lead";

export interface EventDefinition<T extends string = string, P extends TObject = TObject> {
  type: T;
  /**
   * The payload's version. Adding an optional field keeps it; removing, renaming or retyping a field means a
   * new version, and that a reader of the old one keeps working until no producer of it is left (docs/events.md).
   */
  version: number;
  topic: TopicSpec;
  aggregateType: EventAggregate;
  /** Producer form: closed where our code decides the shape. */
  payload: P;
  /**
   * Reader form: the producer form with every object opened, and the fields listed as `optionalInReader` optional
   * (typed as the producer form: a reader must still expect those fields to be missing).
   */
  reader: P;
}

/** A copy of `schema` whose objects, at any depth, accept properties they do not name. */
export function tolerant<S extends TSchema>(schema: S): S {
  const copy = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(copy);
    if (!value || typeof value !== "object") return value;
    const source = value as Record<string | symbol, unknown>;
    const out: Record<string | symbol, unknown> = {};
    for (const key of Object.keys(source)) out[key] = copy(source[key]);
    // TypeBox keeps what a schema is (Object, Optional …) under symbols: carry them over.
    for (const symbol of Object.getOwnPropertySymbols(source)) out[symbol] = source[symbol];
    if (out.type === "object" && source[Kind] !== undefined && out.additionalProperties === false)
      out.additionalProperties = true;
    return out;
  };
  return copy(schema) as S;
}

/** The reader form of a payload: tolerant, and `optional` fields (ones older producers did not write) optional. */
export function readerOf<P extends TObject>(payload: P, optional: readonly (keyof P["properties"] & string)[] = []): P {
  const open = tolerant(payload);
  const properties: Record<string, TSchema> = { ...open.properties };
  for (const key of optional) {
    const property = properties[key];
    if (property) properties[key] = property[OptionalKind] ? property : Type.Optional(property);
  }
  return Type.Object(properties, { additionalProperties: true }) as unknown as P;
}

export function defineEvent<T extends string, P extends TObject>(d: {
  type: T;
  version: number;
  topic: TopicSpec;
  aggregateType: EventAggregate;
  payload: P;
  optionalInReader?: readonly (keyof P["properties"] & string)[];
}): EventDefinition<T, P> {
  return {
    type: d.type,
    version: d.version,
    topic: d.topic,
    aggregateType: d.aggregateType,
    payload: d.payload,
    reader: readerOf(d.payload, d.optionalInReader),
  };
}

/** The part of a reader a consumer relies on: the named fields of the event's reader form (still tolerant). */
export function pickReader<P extends TObject, K extends (keyof P["properties"] & string)[]>(
  event: EventDefinition<string, P>,
  keys: [...K],
) {
  return Type.Pick(event.reader, keys, { additionalProperties: true });
}

/** `reason`: "invalid <type> payload: <detail>"; `detail`: the first problem's path and message. */
export type DecodedPayload<T> = { ok: true; value: T } | { ok: false; reason: string; detail: string };

/** Checks a payload against a reader: the payload (typed) or why it can never be read (a poison message). */
export function decodePayload<S extends TSchema>(reader: S, payload: unknown, what: string): DecodedPayload<Static<S>> {
  registerFormats();
  if (Value.Check(reader, payload)) return { ok: true, value: payload };
  const first = [...Value.Errors(reader, payload)][0];
  const detail = first ? `${first.path || "/"} ${first.message}` : "invalid";
  return { ok: false, reason: `invalid ${what} payload: ${detail}`, detail };
}

/** The envelope fields of one event (envelope.ts), for producers. */
export interface EnvelopeFields {
  aggregateId: string;
  version: number;
  partnerId: string;
  mode: RecordMode;
  /** Defaults: a new event ID (a time-ordered UUID, event-id.ts) and now. */
  eventId?: string;
  occurredAt?: string;
}

/** A whole message value: the envelope of `event` around a payload built to its producer form. */
export function buildEnvelope<E extends EventDefinition>(
  event: E,
  fields: EnvelopeFields,
  payload: Static<E["payload"]>,
) {
  return {
    eventId: fields.eventId ?? newEventId(),
    type: event.type as E["type"],
    aggregateType: event.aggregateType,
    aggregateId: fields.aggregateId,
    version: fields.version,
    partnerId: fields.partnerId,
    mode: fields.mode,
    occurredAt: fields.occurredAt ?? new Date().toISOString(),
    payload,
  };
}
export type BuiltEnvelope = ReturnType<typeof buildEnvelope>;
