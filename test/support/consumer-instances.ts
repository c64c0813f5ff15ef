// Several instances of one consumer service as real processes (spawned by the fault harness's spawnService),
// sharing the partitions of a consumer group: which instance owns which partition (from each process's
// "partitions assigned" log line), which partition a message key goes to, and waits for the group to settle.
import { Partitioners } from "kafkajs";
import {
  freePort,
  spawnService,
  waitUntil,
  type ServiceProcess,
} from "../../services/api/test/faults/support/fault-harness.ts";

export type { ServiceProcess };

/**
 * Group timing for instance tests: Kafka's smallest session (6 s), so a SIGKILLed instance's partitions move
 * within seconds, and any handler longer than that proves the heartbeats while working.
 */
export const SHORT_SESSION = { KAFKA_SESSION_TIMEOUT_MS: "6000" };

/** Starts `count` instances of a service (`bun services/<service>/src/main.ts`), each on its own health port, in parallel. */
export async function startInstances(
  service: string,
  count: number,
  env: Record<string, string>,
): Promise<ServiceProcess[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const port = await freePort();
      return spawnService(service, { LOG_LEVEL: "info", ...SHORT_SESSION, ...env, HEALTH_PORT: String(port) }, port);
    }),
  );
}

/** A process's JSON log lines that parse, optionally only those with this `msg`. */
export function logLines(p: ServiceProcess, msg?: string): Record<string, any>[] {
  const out: Record<string, any>[] = [];
  for (const line of p.lines) {
    if (!line.startsWith("{")) continue;
    try {
      const parsed = JSON.parse(line) as Record<string, any>;
      if (msg === undefined || parsed.msg === msg) out.push(parsed);
    } catch {}
  }
  return out;
}

/** The partitions of `topic` the process last said it owns in `groupId` (null before it joined). */
export function assignedPartitions(p: ServiceProcess, groupId: string, topic: string): number[] | null {
  const last = logLines(p, "partitions assigned")
    .filter((l) => l.groupId === groupId)
    .at(-1);
  if (!last) return null;
  return (last.assigned?.[topic] as number[] | undefined) ?? [];
}

/** How many times the process joined the group (each rebalance it took part in logs one assignment). */
export function assignments(p: ServiceProcess, groupId: string): number {
  return logLines(p, "partitions assigned").filter((l) => l.groupId === groupId).length;
}

/**
 * Waits until the live instances' latest assignments split the topic's partitions between them: every
 * partition owned by exactly one, and (when `everyoneWorks`) every instance owning at least one.
 */
export async function waitForSplit(
  instances: ServiceProcess[],
  groupId: string,
  topic: string,
  partitions: number,
  opts: { everyoneWorks?: boolean; timeoutMs?: number } = {},
): Promise<Map<ServiceProcess, number[]>> {
  return waitUntil(
    `the ${partitions} partitions of ${topic} to be split among ${instances.length} instance(s) of ${groupId}`,
    async () => {
      const split = new Map<ServiceProcess, number[]>();
      for (const p of instances) {
        const owned = assignedPartitions(p, groupId, topic);
        if (owned === null || (opts.everyoneWorks !== false && owned.length === 0)) return null;
        split.set(p, owned);
      }
      const all = [...split.values()].flat().sort((a, b) => a - b);
      return all.length === partitions && all.every((n, i) => n === i) ? split : null;
    },
    opts.timeoutMs ?? 90_000,
  );
}

/** The instance that owns `partition` in the split. */
export function ownerOf(split: Map<ServiceProcess, number[]>, partition: number): ServiceProcess {
  for (const [p, owned] of split) if (owned.includes(partition)) return p;
  throw new Error(`nobody owns partition ${partition}`);
}

/** The partition the producers (kafkajs's default partitioner, as the outbox relay uses) send a key to. */
export function partitionOf(key: string, partitions: number): number {
  const partitioner = Partitioners.DefaultPartitioner();
  const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({
    partitionId,
    leader: 0,
    replicas: [0],
    isr: [0],
    partitionErrorCode: 0,
  }));
  return partitioner({ topic: "any", partitionMetadata, message: { key, value: null } });
}
