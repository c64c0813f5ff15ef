// The Bun behaviour tracing relies on (tracing.ts, tracing-http.ts, message-pipeline.ts), checked on the pinned Bun
// with the real PostgreSQL and Kafka: the AsyncLocalStorage context manager keeps a request's or a message's context
// across awaits, timers and the clients' callbacks, and never lets one request's context reach another's. Where
// Bun's runtime does not give us a context (Bun.serve's handler, kafkajs's eachMessage), the code sets it itself,
// and these tests show why it must.
import { afterAll, describe, expect, test } from "bun:test";
import { context, createContextKey, ROOT_CONTEXT } from "@opentelemetry/api";
import { Kafka, logLevel } from "kafkajs";
import postgres from "postgres";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import {
  activeTraceparent,
  createEventConsumer,
  createTracing,
  ensureContextManager,
  ensureTopics,
  parseTraceparent,
  silentLogger,
  traceHttp,
  type EventConsumer,
} from "../src/index.ts";

ensureContextManager();
const KEY = createContextKey("test value");
const valueNow = () => context.active().getValue(KEY);
const withValue = <T>(value: string, fn: () => T): T => context.with(ROOT_CONTEXT.setValue(KEY, value), fn);

const urls = testUrls();
const sql = postgres(urls.DATABASE_URL, { max: 4, onnotice: () => {} });
const kafka = new Kafka({
  clientId: uniqueName("tracing-context"),
  brokers: urls.KAFKA_BROKERS.split(","),
  logLevel: logLevel.NOTHING,
});
const consumers: EventConsumer[] = [];
afterAll(async () => {
  await Promise.all(consumers.map((c) => c.stop()));
  await sql.end({ timeout: 5 });
});

describe("AsyncLocalStorage on Bun keeps the context", () => {
  test("across awaits, timers, microtasks and fetch", async () => {
    const seen = await withValue("a", async () => {
      const out: unknown[] = [];
      await Bun.sleep(1);
      out.push(valueNow());
      await new Promise((r) => setTimeout(r, 1));
      out.push(valueNow());
      out.push(await new Promise((r) => setTimeout(() => r(valueNow()), 1)));
      out.push(await new Promise((r) => queueMicrotask(() => r(valueNow()))));
      out.push(await new Promise((r) => setImmediate(() => r(valueNow()))));
      await fetch(`${urls.OPENSEARCH_URL}/`).catch(() => null);
      out.push(valueNow());
      return out;
    });
    expect(seen).toEqual(["a", "a", "a", "a", "a", "a"]);
    expect(valueNow()).toBeUndefined();
  });

  test("across postgres.js queries and inside sql.begin's callback, for concurrent requests each its own", async () => {
    const results = await Promise.all(
      ["x", "y", "z"].map((v) =>
        withValue(v, async () => {
          const out: unknown[] = [];
          await sql`SELECT pg_sleep(0.01)`;
          out.push(valueNow());
          await sql.begin(async (tx) => {
            out.push(valueNow());
            await tx`SELECT pg_sleep(0.01)`;
            out.push(valueNow());
          });
          out.push(valueNow());
          return out;
        }),
      ),
    );
    expect(results).toEqual([
      ["x", "x", "x", "x"],
      ["y", "y", "y", "y"],
      ["z", "z", "z", "z"],
    ]);
  });

  test("across kafkajs sends; its eachMessage runs in the context consumer.run() was called in, not the message's", async () => {
    const topic = uniqueName("tracing-context");
    await ensureTopics(kafka, [{ name: topic, partitions: 1 }]);
    const producer = kafka.producer();
    await producer.connect();
    const afterSend = await withValue("sender", async () => {
      await producer.send({ topic, messages: [{ value: "1" }] });
      return valueNow();
    });
    expect(afterSend).toBe("sender");
    const consumer = kafka.consumer({ groupId: uniqueName("tracing-context") });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    const seen = Promise.withResolvers<unknown>();
    await withValue("boot", () => consumer.run({ eachMessage: async () => seen.resolve(valueNow()) }));
    // The boot's context leaks into every message: the event consumer sets each message's own (message-pipeline.ts).
    expect(await seen.promise).toBe("boot");
    await consumer.disconnect();
    await producer.disconnect();
  });
});

describe("what the services build on it", () => {
  test("Bun.serve runs its handler in the context it was started in: the middleware starts each request from the root, with its own span", async () => {
    const tracing = createTracing(
      { zipkinUrl: "http://127.0.0.1:9/api/v2/spans", sampleRatio: 1, serviceName: "pss-test" },
      { export: { fetch: async () => new Response(null, { status: 202 }) } },
    );
    const handler = async () => {
      const before = activeTraceparent();
      // Interleave: every request waits while the others run.
      await sql`SELECT pg_sleep(0.02)`;
      return Response.json({ before, after: activeTraceparent(), leaked: valueNow() ?? null });
    };
    const plain = withValue("server start", () => Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: handler }));
    const traced = withValue("server start", () =>
      Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: traceHttp(tracing, handler) }),
    );
    type Answer = { before: string | null; after: string | null; leaked: string | null };
    const ask = async (port: number) => (await (await fetch(`http://127.0.0.1:${port}/`)).json()) as Answer;
    try {
      // Bun's behaviour: the context active at Bun.serve reaches every request.
      expect((await ask(plain.port!)).leaked).toBe("server start");
      const answers = await Promise.all(Array.from({ length: 8 }, () => ask(traced.port!)));
      expect(new Set(answers.map((a) => parseTraceparent(a.before)?.parentId)).size).toBe(8);
      for (const a of answers) {
        expect(a.after).toBe(a.before);
        expect(a.leaked).toBeNull();
      }
    } finally {
      plain.stop(true);
      traced.stop(true);
      await tracing.shutdown();
    }
  });

  test("the event consumer runs each message's handler in that message's consumer span, across partitions at once", async () => {
    const topic = uniqueName("tracing-context");
    const dlq = `${topic}.dlq`;
    await ensureTopics(kafka, [
      { name: topic, partitions: 3 },
      { name: dlq, partitions: 1 },
    ]);
    const tracing = createTracing(
      { zipkinUrl: "http://127.0.0.1:9/api/v2/spans", sampleRatio: 1, serviceName: "pss-test" },
      { export: { fetch: async () => new Response(null, { status: 202 }) } },
    );
    const seen = new Map<string, { inHandler: string | null; afterQuery: string | null; ctxTrace: string | null }>();
    const consumer = createEventConsumer({
      kafka,
      groupId: uniqueName("tracing-context"),
      topics: [topic],
      deadLetterTopic: dlq,
      logger: silentLogger,
      partitionsConsumedConcurrently: 3,
      tracing,
      handle: async (event, ctx) => {
        const inHandler = activeTraceparent();
        await sql`SELECT pg_sleep(0.02)`;
        seen.set(event.aggregateId, { inHandler, afterQuery: activeTraceparent(), ctxTrace: ctx.trace.traceparent });
      },
    });
    consumers.push(consumer);
    await consumer.start();
    const producer = kafka.producer();
    await producer.connect();
    const parents = new Map<string, string>();
    await producer.send({
      topic,
      messages: Array.from({ length: 6 }, (_, i) => {
        const traceId = crypto.randomUUID().replaceAll("-", "");
        const traceparent = `00-${traceId}-00f067aa0ba902b7-01`;
        parents.set(String(i + 1), traceId);
        return {
          key: String(i),
          partition: i % 3,
          headers: { traceparent },
          value: JSON.stringify({
            eventId: crypto.randomUUID(),
            type: "test.happened",
            aggregateType: "listing",
            aggregateId: String(i + 1),
            version: 1,
            partnerId: "p",
            occurredAt: new Date().toISOString(),
            payload: {},
          }),
        };
      }),
    });
    await producer.disconnect();
    const deadline = Date.now() + 30_000;
    while (seen.size < 6) {
      if (Date.now() > deadline) throw new Error(`only ${seen.size} of 6 messages handled`);
      await Bun.sleep(100);
    }
    for (const [aggregateId, s] of seen) {
      // The handler's active span is the message's consumer span: a child of the sender's, in the sender's trace.
      expect(parseTraceparent(s.inHandler)?.traceId).toBe(parents.get(aggregateId));
      expect(parseTraceparent(s.inHandler)?.parentId).not.toBe("00f067aa0ba902b7");
      expect(s.afterQuery).toBe(s.inHandler);
      expect(s.ctxTrace).toBe(s.inHandler);
    }
    await tracing.shutdown();
  }, 60_000);
});
