// Steady partner and buyer traffic for the replicated-cluster fault runs, and the figures each run reports:
// acknowledged writes, lost (acknowledged but never published to Kafka, or never reaching its effect), duplicated
// (the same event twice on Kafka; an effect applied twice: a lead e-mailed twice, a fact delivered to the webhook
// receiver under two delivery IDs), and the time to converge (every acknowledged write indexed at its version,
// every lead e-mailed and announced) once the fault is over.
import type { Kafka } from "@pss/service-kit";
import { Topics } from "@pss/contracts";
import type { Sql } from "@pss/service-kit";
import {
  acknowledged,
  startLoad,
  type Answer,
  type Load,
} from "../../../services/api/test/faults/support/fault-harness.ts";
import type { SmtpSink } from "../../../services/leads/test/support/smtp-sink.ts";
import type { Receiver } from "../../../services/webhooks/test/support/receiver.ts";
import { uniqueName } from "../../support/env.ts";

export interface Traffic {
  partnerId: string;
  apiBase: string;
  /** Where buyers' leads go (the marketplace). */
  marketplaceBase: string;
  apiKey: string;
  /** Buyer-visible listings the leads go to (service IDs). */
  leadListings: number[];
  sql: Sql;
  kafka: Kafka;
  smtp: SmtpSink;
  receiver: Receiver;
  /** The receiver's path of the partner's endpoint. */
  webhookPath: string;
}

export interface LeadAnswer {
  leadId: string | null;
  status: number;
  startedAt: number;
}

const EVENT_TOPICS = [Topics.listingEvents.name, Topics.leadEvents.name];

/** Each event topic's partitions and their end offsets now: where a run's events start in the log. */
export type LogPosition = Record<string, { partition: number; offset: string }[]>;

async function logPosition(kafka: Kafka): Promise<LogPosition> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const position: LogPosition = {};
    for (const topic of EVENT_TOPICS)
      position[topic] = (await admin.fetchTopicOffsets(topic)).map((p) => ({ partition: p.partition, offset: p.high }));
    return position;
  } finally {
    await admin.disconnect();
  }
}

/**
 * Every event id in the log from `from` to the current end of each partition, with how many records carry it: a
 * fresh reader (its own group, started at `from`, committing nothing) after the run, so it sees exactly what the
 * log holds, not what a long-lived consumer happened to receive around the faults.
 */
async function readLog(kafka: Kafka, from: LogPosition, timeoutMs: number): Promise<Map<string, number>> {
  const groupId = uniqueName("secured-log-reader");
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map<string, bigint>();
  try {
    for (const topic of EVENT_TOPICS) {
      await admin.setOffsets({ groupId, topic, partitions: from[topic] ?? [] });
      for (const p of await admin.fetchTopicOffsets(topic)) ends.set(`${topic}/${p.partition}`, BigInt(p.high));
    }
  } finally {
    await admin.disconnect();
  }
  const starts = new Map(
    EVENT_TOPICS.flatMap((topic) => (from[topic] ?? []).map((p) => [`${topic}/${p.partition}`, BigInt(p.offset)])),
  );
  const remaining = new Set([...ends].filter(([key, end]) => end > (starts.get(key) ?? 0n)).map(([key]) => key));
  const seen = new Map<string, number>();
  if (remaining.size === 0) return seen;
  const consumer = kafka.consumer({ groupId, sessionTimeout: 30_000, heartbeatInterval: 3_000 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: EVENT_TOPICS, fromBeginning: true });
    const done = Promise.withResolvers<void>();
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ topic, partition, message }) => {
        const key = `${topic}/${partition}`;
        const end = ends.get(key) ?? 0n;
        if (BigInt(message.offset) >= end) return;
        const id = (JSON.parse(message.value?.toString() ?? "{}") as { eventId?: string }).eventId;
        if (id) seen.set(id, (seen.get(id) ?? 0) + 1);
        if (BigInt(message.offset) === end - 1n && remaining.delete(key) && remaining.size === 0) done.resolve();
      },
    });
    const timer = setTimeout(() => done.reject(new Error(`log not read to its end within ${timeoutMs} ms`)), timeoutMs);
    await done.promise.finally(() => clearTimeout(timer));
  } finally {
    await consumer.disconnect();
  }
  return seen;
}

export interface Run {
  name: string;
  load: Load;
  leads: LeadAnswer[];
  startedAt: number;
  /** lead.received facts the receiver had before the run. */
  announcedBefore: number;
  /** The event topics' ends when the run began. */
  position: LogPosition;
  /** When the partner's indexed versions grew (polled every 500 ms until settled): the consumers' progress. */
  indexed: number[];
  stop(): Promise<void>;
  stopWatching(): Promise<void>;
}

/** Distinct lead.received facts the partner's webhook receiver got (by the office's lead count they carry). */
function announcedLeads(t: Traffic): number {
  const versions = new Set<string>();
  for (const r of t.receiver.requests(t.webhookPath)) {
    const body = JSON.parse(r.body) as { type: string; data: { officeId?: string; version?: number } };
    if (body.type === "lead.received") versions.add(`${body.data.officeId}:${body.data.version}`);
  }
  return versions.size;
}

/** PUTs at `perSecond` over 4 lanes (fault-harness's load) and one lead a second to the lead listings. */
export async function startTraffic(t: Traffic, name: string, perSecond: number): Promise<Run> {
  // The log's ends first: every event created after startedAt is published after them.
  const position = await logPosition(t.kafka);
  const startedAt = Date.now();
  const announcedBefore = announcedLeads(t);
  const load = await startLoad({ baseUrl: t.apiBase, apiKey: t.apiKey }, { perSecond, clientTimeoutMs: 20_000 });
  const leads: LeadAnswer[] = [];
  const indexed: number[] = [];
  let running = true;
  let watching = true;
  const watcher = watchIndexing(t, indexed, () => !watching);
  const leadLoop = (async () => {
    for (let n = 0; running; n++) {
      const began = Date.now();
      const listing = t.leadListings[n % t.leadListings.length];
      let status = 0;
      let leadId: string | null = null;
      try {
        const res = await fetch(`${t.marketplaceBase}/v1/listings/${listing}/leads`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            name: `Buyer ${n}`,
            email: `buyer.${n}.${startedAt}@example.com`,
            message: `Lead ${n} of the ${name} run.`,
          }),
          signal: AbortSignal.timeout(20_000),
        });
        status = res.status;
        leadId = ((await res.json().catch(() => ({}))) as { leadId?: string }).leadId ?? null;
      } catch {}
      leads.push({ leadId, status, startedAt: began });
      await Bun.sleep(Math.max(0, 1000 - (Date.now() - began)));
    }
  })();
  return {
    name,
    load,
    leads,
    startedAt,
    announcedBefore,
    position,
    indexed,
    async stop() {
      running = false;
      await Promise.all([load.stop(), leadLoop]);
    },
    async stopWatching() {
      watching = false;
      await watcher;
    },
  };
}

/** Records when the partner's indexed versions grow, until `until()` says stop. */
function watchIndexing(t: Traffic, times: number[], until: () => boolean): Promise<void> {
  return (async () => {
    let last = -1;
    while (!until()) {
      const [row] = await t.sql<{ total: number }[]>`
        SELECT coalesce(sum(indexed_version), 0)::int AS total FROM listings WHERE partner_id = ${t.partnerId}`.catch(
        () => [{ total: last }],
      );
      if (row && row.total > last) {
        if (last >= 0) times.push(Date.now());
        last = row.total;
      }
      await Bun.sleep(500);
    }
  })();
}

export interface Figures {
  name: string;
  /** Partner PUTs answered 2xx, and buyer leads answered 202. */
  acknowledged: { writes: number; leads: number };
  /** PUTs not acknowledged (503 while PostgreSQL was down; never while only Kafka was hurt). */
  refused: number;
  /** What the refused PUTs were answered (status, or the client's error), for a failing run's message. */
  refusedAnswers: string[];
  /** Up to five of what is missing, for a failing run's message. */
  missingSample: string[];
  /** Events of the run the log does not hold (their outbox rows say when they were written and published). */
  lostEventIds: string[];
  maxPutMs: number;
  /** Acknowledged but missing at the end: events never on Kafka, writes never indexed, leads never e-mailed. */
  lost: { events: number; writes: number; leads: number; announcements: number };
  /** The same event more than once on Kafka (a producer retry, harmless), and effects applied twice. */
  duplicated: { kafkaRecords: number; emails: number; webhooks: number };
  /** From the end of the fault until everything acknowledged reached its effect. */
  convergedMs: number;
  /** The longest time the indexer made no progress while writes were waiting for it. */
  maxIndexingStallMs: number;
}

interface Converged {
  unindexed: string[];
  unmailed: string[];
  unannounced: string[];
  unpublished: string[];
}

/** The events the run's writes and leads put in the outbox, and whether the relay has published each. */
async function runEvents(t: Traffic, run: Run): Promise<{ eventId: string; published: boolean }[]> {
  return t.sql<{ eventId: string; published: boolean }[]>`
    SELECT payload->>'eventId' AS "eventId", published_at IS NOT NULL AS published FROM outbox
    WHERE topic = ANY(${EVENT_TOPICS}::text[])
      AND payload->>'partnerId' = ${t.partnerId} AND created_at >= ${new Date(run.startedAt)}`;
}

/** What is still missing of everything the run acknowledged (empty lists: converged). */
async function missing(t: Traffic, run: Run): Promise<Converged> {
  const writes = run.load.answers.filter(acknowledged);
  const lastByListing = new Map<string, Answer>();
  for (const a of writes) lastByListing.set(a.externalId, a);
  const rows = await t.sql<{ external_id: string; version: number; indexed_version: number | null; title: string }[]>`
    SELECT external_id, version, indexed_version, title FROM listings
    WHERE partner_id = ${t.partnerId} AND external_id = ANY(${[...lastByListing.keys()]}::text[])`;
  const byId = new Map(rows.map((r) => [r.external_id, r]));
  const unindexed = [...lastByListing.values()].flatMap((a) => {
    const row = byId.get(a.externalId);
    // Indexed at the stored version, which holds the last acknowledged write (or a later attempt).
    return row && row.indexed_version !== null && row.indexed_version >= row.version ? [] : [a.externalId];
  });
  const leadIds = run.leads.filter((l) => l.status === 202 && l.leadId).map((l) => l.leadId as string);
  const mailed = new Set(t.smtp.received.map((m) => m.headers["message-id"] ?? ""));
  const unmailed = leadIds.filter((id) => ![...mailed].some((m) => m.startsWith(`<lead-${id}@`)));
  // lead.received carries no buyer data (no lead ID): one fact per lead, each a new office lead count.
  const short = run.announcedBefore + leadIds.length - announcedLeads(t);
  const unannounced = Array.from({ length: Math.max(0, short) }, (_, i) => `lead.received #${i + 1}`);
  // The run's events still in the outbox unpublished (published rows are kept: OUTBOX_RETENTION_SECONDS).
  const unpublished = (await runEvents(t, run)).filter((e) => !e.published).map((e) => e.eventId);
  return { unindexed, unmailed, unannounced, unpublished };
}

/**
 * Waits (up to `timeoutMs`) until everything the run acknowledged reached its effect, measured from `faultEndedAt`,
 * then counts what is lost and what was duplicated.
 */
export async function settle(t: Traffic, run: Run, faultEndedAt: number, timeoutMs: number): Promise<Figures> {
  const deadline = Date.now() + timeoutMs;
  let state = await missing(t, run);
  for (;;) {
    const remaining = Object.values(state).reduce((n, l) => n + l.length, 0);
    if (remaining === 0 || Date.now() > deadline) break;
    await Bun.sleep(250);
    state = await missing(t, run);
  }
  const convergedMs = Date.now() - faultEndedAt;
  await run.stopWatching();
  const progress = [run.startedAt, ...run.indexed];
  const maxIndexingStallMs = Math.max(0, ...progress.slice(1).map((at, i) => at - progress[i]!));
  const messageIds = new Map<string, number>();
  for (const m of t.smtp.received) {
    const id = m.headers["message-id"] ?? "";
    messageIds.set(id, (messageIds.get(id) ?? 0) + 1);
  }
  // One fact, one delivery: a fact under two delivery IDs was made twice (a repeat of one ID is a redelivery).
  const deliveries = new Map<string, Set<string>>();
  for (const r of t.receiver.requests(t.webhookPath)) {
    const body = JSON.parse(r.body) as { type: string; data: Record<string, unknown> };
    const fact = `${body.type}:${body.data.serviceListingId ?? ""}:${body.data.officeId ?? ""}:${body.data.version}`;
    deliveries.set(fact, (deliveries.get(fact) ?? new Set()).add(r.headers["webhook-id"] ?? ""));
  }
  // What the log holds: every event the run wrote must be there (lost otherwise); a record twice is a duplicate.
  const log = await readLog(t.kafka, run.position, 60_000);
  const lostIds = (await runEvents(t, run)).filter((e) => !log.has(e.eventId)).map((e) => e.eventId);
  const lostEvents = lostIds.length;
  const puts = run.load.answers;
  return {
    name: run.name,
    acknowledged: {
      writes: puts.filter(acknowledged).length,
      leads: run.leads.filter((l) => l.status === 202).length,
    },
    refused: puts.filter((a) => !acknowledged(a)).length,
    refusedAnswers: puts
      .filter((a) => !acknowledged(a))
      .slice(0, 5)
      .map((a) => `${a.status} after ${Math.round(a.ms)} ms: ${JSON.stringify(a.body).slice(0, 120)}`),
    missingSample: [
      ...(Object.entries(state) as [string, string[]][]).flatMap(([kind, ids]) =>
        ids.slice(0, 2).map((id) => `${kind}: ${id}`),
      ),
      ...lostIds.slice(0, 3).map((id) => `not in the log: ${id}`),
    ],
    lostEventIds: lostIds,
    maxPutMs: Math.round(Math.max(0, ...puts.filter(acknowledged).map((a) => a.ms))),
    lost: {
      events: lostEvents,
      writes: state.unindexed.length,
      leads: state.unmailed.length,
      announcements: state.unannounced.length,
    },
    duplicated: {
      kafkaRecords: [...log.values()].filter((n) => n > 1).length,
      emails: [...messageIds.values()].filter((n) => n > 1).length,
      webhooks: [...deliveries.values()].filter((ids) => ids.size > 1).length,
    },
    convergedMs: Object.values(state).every((l) => l.length === 0) && lostEvents === 0 ? convergedMs : -1,
    maxIndexingStallMs,
  };
}

/** The run's figures as one log line (docs/operations.md quotes them). */
export function report(f: Figures, extra: Record<string, number | string> = {}): string {
  const fields = {
    acknowledged: `${f.acknowledged.writes} writes + ${f.acknowledged.leads} leads`,
    refused: f.refused,
    lost: `${f.lost.events} events, ${f.lost.writes} writes, ${f.lost.leads} lead e-mails, ${f.lost.announcements} lead webhooks`,
    duplicated: `${f.duplicated.emails} e-mails, ${f.duplicated.webhooks} webhooks (Kafka records seen twice: ${f.duplicated.kafkaRecords})`,
    converged: f.convergedMs >= 0 ? `${(f.convergedMs / 1000).toFixed(1)} s after the fault` : "NOT converged",
    "max PUT": `${f.maxPutMs} ms`,
    "longest indexing stall": `${(f.maxIndexingStallMs / 1000).toFixed(1)} s`,
    ...extra,
  };
  return `replicated-cluster fault "${f.name}": ${Object.entries(fields)
    .map(([k, v]) => `${k} ${v}`)
    .join("; ")}`;
}
