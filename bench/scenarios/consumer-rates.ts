// How many events per second each consumer sustains ALONE, against the rate its input arrives at, so an
// operator can size partitions and instances: the API writes a backlog of real events (nothing consuming),
// then the consumer is started on a fresh consumer group positioned before that backlog and timed while it
// works through it (from its first committed offset to the last, so start-up and group joins do not count).
// Media's figure is the `media` scenario (images/s through the service).
import { Kafka, logLevel, type Admin } from "kafkajs";
import { ALL_TOPICS, Topics } from "@pss/contracts";
import { ensureTopics } from "@pss/service-kit";
import type { BenchContext } from "../lib/context.ts";
import { freePort, ROOT, runLoad, serviceCommand, startApiProcess, waitHttp } from "../lib/processes.ts";
import { round, type Row } from "../lib/result.ts";
import { startSmtpSink } from "../../services/leads/test/support/smtp-sink.ts";

type Offsets = Map<number, number>;

async function topicEnds(admin: Admin, topic: string): Promise<Offsets> {
  return new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)]));
}

async function committed(admin: Admin, groupId: string, topic: string): Promise<Offsets> {
  const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
  return new Map(t!.partitions.map((p) => [p.partition, Number(p.offset)]));
}

const total = (o: Offsets) => [...o.values()].reduce((a, b) => a + Math.max(0, b), 0);

/** Times groups from their first progress to reaching `ends`; returns events/s over that span. */
async function timeCatchUp(
  admin: Admin,
  groups: string[],
  topic: string,
  start: Offsets,
  ends: Offsets,
  timeoutMs: number,
): Promise<{ rate: number; events: number; seconds: number }> {
  const events = total(ends) - total(start);
  const deadline = performance.now() + timeoutMs;
  let firstProgressAt: number | null = null;
  let doneAt: number | null = null;
  let doneAtStart = 0;
  while (performance.now() < deadline) {
    const positions = await Promise.all(groups.map((g) => committed(admin, g, topic)));
    // The slowest group decides (a lead is done when it is counted AND mailed). No commit yet (-1) = at start.
    const progressOf = (o: Offsets) =>
      [...ends.keys()].reduce(
        (sum, p) => sum + Math.max(0, (o.get(p) ?? -1) < 0 ? 0 : o.get(p)! - (start.get(p) ?? 0)),
        0,
      );
    const progressed = Math.min(...positions.map(progressOf));
    if (progressed > 0 && firstProgressAt === null) {
      firstProgressAt = performance.now();
      doneAtStart = progressed;
    }
    if (progressed >= events) {
      doneAt = performance.now();
      break;
    }
    await Bun.sleep(100);
  }
  if (firstProgressAt === null || doneAt === null)
    throw new Error(`consumer did not work through ${events} events within ${timeoutMs / 1000} s`);
  const seconds = Math.max(0.001, (doneAt - firstProgressAt) / 1000);
  return { rate: (events - doneAtStart) / seconds, events, seconds };
}

async function positionGroup(admin: Admin, groupId: string, topic: string, at: Offsets) {
  await admin.setOffsets({
    groupId,
    topic,
    partitions: [...at].map(([partition, offset]) => ({ partition, offset: String(offset) })),
  });
}

function spawnConsumer(entry: string, env: Record<string, string>) {
  return Bun.spawn(serviceCommand(entry), {
    cwd: ROOT,
    env: { ...process.env, ...env, LOG_LEVEL: "warn" },
    stdout: "ignore",
    stderr: "inherit",
  });
}

async function stop(proc: ReturnType<typeof spawnConsumer>) {
  proc.kill("SIGTERM");
  await Promise.race([proc.exited, Bun.sleep(20_000)]);
  proc.kill("SIGKILL");
}

async function waitOutboxDrained(ctx: BenchContext) {
  const deadline = Date.now() + 120_000;
  while (
    (await ctx.sql`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL AND set_aside_at IS NULL`)[0]!.n > 0
  ) {
    if (Date.now() > deadline) throw new Error("the outbox did not drain within 120 s");
    await Bun.sleep(200);
  }
}

export async function consumerRates(ctx: BenchContext): Promise<Row[]> {
  const tag = Date.now().toString(36);
  const kafka = new Kafka({
    clientId: `bench-rates-${tag}`,
    brokers: ctx.urls.KAFKA_BROKERS.split(","),
    logLevel: logLevel.NOTHING,
  });
  await ensureTopics(kafka, ALL_TOPICS);
  const admin = kafka.admin();
  await admin.connect();
  const rows: Row[] = [];
  try {
    // 1. The input: the API at saturation writes listings (its write rate is the indexer's input rate).
    const listingStart = await topicEnds(admin, Topics.listingEvents.name);
    const leadStart = await topicEnds(admin, Topics.leadEvents.name);
    const api = await startApiProcess({
      ...ctx.urls,
      DATABASE_POOL_SIZE: "32",
      LEAD_RATE_LIMIT_PER_ADDRESS: "0",
      LEAD_RATE_LIMIT_PER_LISTING_ADDRESS: "0",
      LEAD_RATE_LIMIT_GLOBAL_PER_MINUTE: "0",
    });
    let writeRate: number;
    let leadRate: number;
    try {
      const common = { url: api.url, key: ctx.partner.apiKey, broker: ctx.brokerExternalId, connections: 32 };
      await runLoad({
        ...common,
        mode: "new",
        prefix: `rates-${tag}-warm`,
        offset: 0,
        durationSeconds: ctx.warmupSeconds,
      });
      const writes = await runLoad({
        ...common,
        mode: "new",
        prefix: `rates-${tag}`,
        offset: 0,
        durationSeconds: ctx.durationSeconds,
      });
      writeRate = writes.rps;
      // Leads: buyers' inquiries on the listings just written (the lead intake at its own saturation).
      const ids = (
        await ctx.sql`SELECT id::text AS id FROM listings WHERE partner_id = ${ctx.partner.partnerId} AND external_id LIKE ${`rates-${tag}-%`} LIMIT 200`
      ).map((r) => r.id as string);
      const leads = await runLoad({
        ...common,
        mode: "lead",
        listingIds: ids,
        durationSeconds: Math.max(3, Math.round(ctx.durationSeconds / 3)),
      });
      leadRate = leads.rps;
      await waitOutboxDrained(ctx);
    } finally {
      await api.stop();
    }
    const listingEnds = await topicEnds(admin, Topics.listingEvents.name);
    const leadEnds = await topicEnds(admin, Topics.leadEvents.name);

    // 2. The indexer alone, into an alias of its own.
    const alias = `bench-rates-${tag}`;
    const indexerGroup = `bench-indexer-rates-${tag}`;
    await positionGroup(admin, indexerGroup, Topics.listingEvents.name, listingStart);
    await positionGroup(
      admin,
      indexerGroup,
      Topics.brokerEvents.name,
      await topicEnds(admin, Topics.brokerEvents.name),
    );
    const indexerPort = await freePort();
    const indexer = spawnConsumer("services/indexer/src/main.ts", {
      ...ctx.urls,
      HEALTH_PORT: String(indexerPort),
      INDEXER_GROUP_ID: indexerGroup,
      OPENSEARCH_INDEX_ALIAS: alias,
    });
    try {
      await waitHttp(`http://127.0.0.1:${indexerPort}/readyz`);
      const r = await timeCatchUp(admin, [indexerGroup], Topics.listingEvents.name, listingStart, listingEnds, 300_000);
      rows.push({
        scenario: "indexer alone: listing events/s",
        figure: round(r.rate),
        unit: "events/s",
        baseline: round(writeRate),
        baselineLabel: "API saturated write rate, same run",
        ratio: round(r.rate / writeRate, 2),
        target: "≥ 2",
        pass: r.rate / writeRate >= 2,
        notes: `${r.events} events in ${round(r.seconds)} s on one instance (${Topics.listingEvents.partitions} partitions)`,
      });
    } finally {
      await stop(indexer);
      await fetch(`${ctx.urls.OPENSEARCH_URL}/${alias}-v*`, { method: "DELETE" }).catch(() => {});
    }

    // 3. The leads service alone (counting and mailing to a local SMTP sink).
    const smtp = await startSmtpSink();
    const prefix = `bench-leads-rates-${tag}`;
    for (const g of [`${prefix}-counter`, `${prefix}-mailer`])
      await positionGroup(admin, g, Topics.leadEvents.name, leadStart);
    const leadsPort = await freePort();
    const leadsProc = spawnConsumer("services/leads/src/main.ts", {
      ...ctx.urls,
      HEALTH_PORT: String(leadsPort),
      LEADS_GROUP_PREFIX: prefix,
      SMTP_HOST: "127.0.0.1",
      SMTP_PORT: String(smtp.port),
      SMTP_SECURE: "false",
      SMTP_FROM: "Leads <leads@bench.example.com>",
    });
    try {
      await waitHttp(`http://127.0.0.1:${leadsPort}/readyz`);
      const r = await timeCatchUp(
        admin,
        [`${prefix}-counter`, `${prefix}-mailer`],
        Topics.leadEvents.name,
        leadStart,
        leadEnds,
        300_000,
      );
      rows.push({
        scenario: "leads alone: lead events/s (counted and e-mailed)",
        figure: round(r.rate),
        unit: "events/s",
        baseline: round(leadRate),
        baselineLabel: "lead intake saturated rate, same run",
        ratio: round(r.rate / leadRate, 2),
        target: "reported",
        pass: null,
        notes: `${r.events} events in ${round(r.seconds)} s on one instance, SMTP on loopback`,
      });
    } finally {
      await stop(leadsProc);
      await smtp.stop();
    }
  } finally {
    await admin.disconnect();
  }
  return rows;
}
