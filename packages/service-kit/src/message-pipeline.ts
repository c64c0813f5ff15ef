// The one path every consumed message takes (event-consumer.ts), whether it arrives alone (eachMessage) or in a
// partition batch (eachBatch): read the envelope (a message that is not one goes to the dead-letter topic), hand
// the valid ones to the handler with heartbeats going on and retries with backoff for anything but PermanentError,
// dead-letter what failed permanently, count and log each outcome. Each message is a consumer span (tracing.ts), a
// child of the span that sent it (its traceparent header); a single message's handler runs inside it, and the
// context of each message of a batch carries its own span's traceparent, for what the batch writes about it.
import type { IHeaders, KafkaMessage, Producer } from "./kafka-client.ts";
import type { AnyEventEnvelope } from "@pss/contracts";
import { REPLAYED_FROM_HEADER } from "./dead-letters.ts";
import { messageLogFields, parseEnvelope } from "./event-envelope.ts";
import {
  PermanentError,
  type EventConsumerOptions,
  type HandleOutcome,
  type MessageContext,
} from "./event-consumer-types.ts";
import type { Logger } from "./logger.ts";
import { traceFromHeaders } from "./trace.ts";
import { recordFailure, SpanKind, traceparentOf, withoutSpan, type Span, type Tracing } from "./tracing.ts";

/** Thrown out of a handler's retries when the consumer stops: the message stays uncommitted for redelivery. */
export class Stopping extends Error {}

export interface PipelineItem {
  event: AnyEventEnvelope;
  ctx: MessageContext;
  message: KafkaMessage;
  /** The message's consumer span, ended with its outcome. */
  span: Span;
}

/** What the handler did with the valid messages: the ones that failed for good, and (one message) its outcome. */
export interface Handled {
  failed: { event: AnyEventEnvelope; reason: string }[];
  outcome?: void | HandleOutcome;
}

export interface MessagePipeline {
  /** The messages of one partition, handled through the one path; throws Stopping when the consumer stops. */
  run(
    topic: string,
    partition: number,
    messages: KafkaMessage[],
    heartbeat: () => Promise<void>,
    handle: (items: PipelineItem[]) => Promise<Handled>,
  ): Promise<void>;
}

const elapsedMs = (since: number) => Math.round((performance.now() - since) * 10) / 10;

export function createMessagePipeline(
  opts: EventConsumerOptions,
  deps: { log: Logger; heartbeatIntervalMs: number; isStopping(): boolean; producer(): Producer; tracing: Tracing },
): MessagePipeline {
  const { log, isStopping, tracing } = deps;
  const metrics = opts.metrics;
  const initialBackoff = opts.initialBackoffMs ?? 200;
  const maxBackoff = opts.maxBackoffMs ?? 30_000;

  /** One handler call, timed; `messages` failed attempts are counted as retried when it throws for a retry. */
  async function attempt<T>(topic: string, messages: number, fn: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof PermanentError) && !isStopping()) metrics?.count(opts.groupId, topic, "retried", messages);
      throw err;
    } finally {
      metrics?.observeHandler(opts.groupId, topic, (performance.now() - started) / 1000);
    }
  }

  async function retrying<T>(what: string, fn: () => Promise<T>, logger: Logger): Promise<T> {
    let delay = initialBackoff;
    for (let attempt = 1; ; attempt++) {
      if (isStopping()) throw new Stopping("stopping");
      try {
        return await fn();
      } catch (err) {
        if (err instanceof PermanentError) throw err;
        if (isStopping()) throw new Stopping("stopping");
        logger.warn("handler failed; retrying", {
          component: "event-consumer",
          what,
          attempt,
          retryInMs: delay,
          err: (err as Error).message,
        });
        await Bun.sleep(delay * (0.8 + Math.random() * 0.4));
        delay = Math.min(delay * 2, maxBackoff);
      }
    }
  }

  /**
   * The context of one message: its position, its consumer span (a child of the sender's, from the traceparent
   * header), its trace for what it causes (the request ID it came with, this span's traceparent) and a logger
   * carrying them and the event.
   */
  function contextOf(
    topic: string,
    partition: number,
    message: KafkaMessage,
    event?: AnyEventEnvelope,
  ): { ctx: MessageContext; span: Span } {
    const incoming = traceFromHeaders(message.headers);
    const span = tracing.startSpan(`${opts.groupId} ${event?.type ?? "message"}`, {
      kind: SpanKind.CONSUMER,
      parent: incoming.traceparent,
    });
    if (span.isRecording()) {
      span.setAttributes({
        "messaging.system": "kafka",
        "messaging.destination.name": topic,
        "messaging.consumer.group.name": opts.groupId,
        "messaging.destination.partition.id": String(partition),
        "messaging.kafka.offset": Number(message.offset),
      });
      if (incoming.requestId) span.setAttribute("pss.request_id", incoming.requestId);
      if (event)
        span.setAttributes({
          "pss.event_id": event.eventId,
          "pss.event_type": event.type,
          "pss.aggregate": `${event.aggregateType}:${event.aggregateId}`,
          "pss.partner_id": event.partnerId,
        });
    }
    const trace = { requestId: incoming.requestId, traceparent: traceparentOf(span) ?? incoming.traceparent };
    const position = { topic, partition, offset: message.offset };
    const fields = messageLogFields(position, trace, event);
    // A replayed dead letter says where it was replayed from (admin CLI `dlq replay`).
    const replayedFrom = message.headers?.[REPLAYED_FROM_HEADER];
    if (replayedFrom !== undefined)
      fields.replayedFrom = String(Array.isArray(replayedFrom) ? replayedFrom[0] : replayedFrom);
    // From the service's logger (its component stays), not this consumer's: handlers log through it.
    const ctx = { ...position, trace, log: opts.logger.child({ groupId: opts.groupId, ...fields }) };
    return { ctx, span };
  }

  function endSpan(span: Span, outcome: HandleOutcome | "dead-lettered" | "interrupted", reason?: string): void {
    span.setAttribute("pss.outcome", outcome);
    if (reason !== undefined && outcome !== "handled" && outcome !== "skipped") recordFailure(span, new Error(reason));
    span.end();
  }

  function logHandled(
    ctx: MessageContext,
    outcome: HandleOutcome | "dead-lettered",
    began: number,
    extra?: Record<string, unknown>,
  ): void {
    if (ctx.log.enabled("info"))
      ctx.log.info("event handled", { component: "event-consumer", outcome, durationMs: elapsedMs(began), ...extra });
  }

  async function deadLetter(message: KafkaMessage, ctx: MessageContext, reason: string, began: number): Promise<void> {
    const headers: IHeaders = {
      ...message.headers,
      "x-dead-letter-reason": reason.slice(0, 1000),
      "x-original-topic": ctx.topic,
      "x-original-partition": String(ctx.partition),
      "x-original-offset": ctx.offset,
      "x-consumer-group": opts.groupId,
      "x-failed-at": new Date().toISOString(),
    };
    // The original headers (request ID, traceparent) stay on the dead letter, and a replay sends them again.
    const [sent] = await retrying(
      "dead-letter",
      () =>
        deps.producer().send({
          topic: opts.deadLetterTopic,
          acks: -1,
          messages: [{ key: message.key, value: message.value, headers }],
        }),
      ctx.log,
    );
    // Where it landed: what `dlq show --offset` takes.
    ctx.log.error("message sent to dead-letter topic", {
      component: "event-consumer",
      reason,
      deadLetterTopic: opts.deadLetterTopic,
      deadLetterPartition: sent?.partition,
      deadLetterOffset: sent?.baseOffset,
    });
    metrics?.count(opts.groupId, ctx.topic, "dead_lettered");
    logHandled(ctx, "dead-lettered", began, { reason });
  }

  /**
   * Runs `work` while heartbeating every interval. kafkajs heartbeats only between messages and batches, so
   * without this a handler longer than the session timeout would get its member removed mid-work. A heartbeat
   * refused because the group is rebalancing is ignored here: kafkajs sees it again after the handler and rejoins.
   */
  async function whileBeating<T>(heartbeat: () => Promise<void>, work: () => Promise<T>): Promise<T> {
    const timer = setInterval(() => {
      heartbeat().catch((err) => log.debug("heartbeat during work refused", { err: (err as Error).message }));
    }, deps.heartbeatIntervalMs);
    try {
      return await work();
    } finally {
      clearInterval(timer);
    }
  }

  return {
    async run(topic, partition, messages, heartbeat, handle) {
      const began = performance.now();
      const valid: PipelineItem[] = [];
      for (const message of messages) {
        const parsed = parseEnvelope(message.value);
        if (parsed.ok)
          valid.push({ event: parsed.event, message, ...contextOf(topic, partition, message, parsed.event) });
        else {
          const { ctx, span } = contextOf(topic, partition, message);
          try {
            await deadLetter(message, ctx, parsed.reason, began);
            endSpan(span, "dead-lettered", parsed.reason);
          } catch (err) {
            endSpan(span, "interrupted", (err as Error).message);
            throw err;
          }
        }
      }
      if (valid.length === 0) return;
      // One message: its position names the retries and its logger carries them; a batch: its size.
      const single = opts.handle ? (valid[0] ?? null) : null;
      const what = single
        ? `${topic}/${partition}@${single.message.offset}`
        : `${topic}/${partition} batch of ${valid.length}`;
      // One message: its handler runs inside its span (what it does below is its children). A batch: outside
      // every span (none is the batch's), each item's ctx.trace naming its own.
      const inScope = single
        ? (fn: () => Promise<Handled>) =>
            // From the root: kafkajs runs handlers in the context its consumer was started in.
            withoutSpan(() => tracing.run(single.span, fn, { requestId: single.ctx.trace.requestId }))
        : (fn: () => Promise<Handled>) => withoutSpan(fn);
      let handled: Handled;
      try {
        handled = await whileBeating(heartbeat, () =>
          inScope(() =>
            retrying(what, () => attempt(topic, valid.length, () => handle(valid)), single?.ctx.log ?? log),
          ),
        );
      } catch (err) {
        // Stopping (the messages are redelivered): the spans say so and end.
        for (const item of valid) endSpan(item.span, "interrupted", (err as Error).message);
        throw err;
      }
      const failedEvents = new Set<AnyEventEnvelope>();
      for (const f of handled.failed) {
        const item = valid.find((v) => v.event === f.event);
        if (item && !failedEvents.has(item.event)) {
          failedEvents.add(item.event);
          await deadLetter(item.message, item.ctx, f.reason, began);
          endSpan(item.span, "dead-lettered", f.reason);
        }
      }
      if (valid.length > failedEvents.size)
        metrics?.count(opts.groupId, topic, "handled", valid.length - failedEvents.size);
      for (const item of valid)
        if (!failedEvents.has(item.event)) {
          logHandled(item.ctx, handled.outcome ?? "handled", began, single ? undefined : { batchSize: valid.length });
          endSpan(item.span, handled.outcome ?? "handled");
        }
    },
  };
}
