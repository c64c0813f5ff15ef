// Two indexer instances as real processes (`bun services/indexer/src/main.ts`) in one consumer group on a search
// alias of their own: they share the listing topic's partitions and every listing ends indexed at its latest
// version, also when one of them is SIGKILLed while writes stream in (its partitions, with the batches it never
// committed, go to the other). The reconciler is off: nothing here may be repaired behind the consumers' back.
import { Client } from "@opensearch-project/opensearch";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Topics } from "@pss/contracts";
import { moveGroupToEnd, waitUntil } from "../../api/test/faults/support/fault-harness.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import {
  assignments,
  logLines,
  ownerOf,
  partitionOf,
  startInstances,
  waitForSplit,
  type ServiceProcess,
} from "../../../test/support/consumer-instances.ts";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import { deleteSearchIndex } from "./support/indexer-harness.ts";

const TOPIC = Topics.listingEvents.name;
const PARTITIONS = Topics.listingEvents.partitions;
const alias = uniqueName("scale-listings");
const group = uniqueName("scale-indexer");
const opensearch = new Client({ node: testUrls().OPENSEARCH_URL, requestTimeout: 10_000 });
let api: ApiHarness;
let partner: Partner;
let brokerId: string;
let instances: ServiceProcess[] = [];

beforeAll(async () => {
  api = await startApi({ searchAlias: alias });
  partner = await api.createPartner();
  brokerId = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
  await moveGroupToEnd(api.kafka, group);
  instances = await startInstances("indexer", 2, {
    OPENSEARCH_INDEX_ALIAS: alias,
    INDEXER_GROUP_ID: group,
    RECONCILE_INTERVAL_MS: "0",
  });
  await waitForSplit(instances, group, TOPIC, PARTITIONS);
}, 150_000);

afterAll(async () => {
  await Promise.all(instances.map((p) => p.stop()));
  await api?.stop();
  await deleteSearchIndex(alias);
  await opensearch.close();
}, 60_000);

/** One write of a listing (its title says which), under a request ID of its own. */
async function write(externalId: string, title: string): Promise<{ id: number; requestId: string }> {
  const requestId = uniqueName("req");
  const res = await call(api.baseUrl, "PUT", `/partner/v1/listings/${externalId}`, {
    key: partner.apiKey,
    headers: { "x-request-id": requestId },
    body: sample.listing(brokerId, { title, photos: [] }),
  });
  expect([200, 201]).toContain(res.status);
  return { id: res.body.serviceListingId, requestId };
}

/** Every listing's index state is 'indexed' at its stored version, and its document holds that version's title. */
async function expectIndexedAtLatest(ids: number[], lastTitle: Map<number, string>, timeoutMs: number): Promise<void> {
  const behind = async () => {
    const rows = await api.sql<
      { id: string; version: number; title: string; index_state: string; indexed_version: number | null }[]
    >`
      SELECT id::text AS id, version, title, index_state, indexed_version FROM listings WHERE id = ANY(${ids}::bigint[])`;
    const late: string[] = [];
    for (const r of rows) {
      if (r.title !== lastTitle.get(Number(r.id)))
        late.push(`${r.id}: stored title '${r.title}' is not the last written`);
      else if (r.index_state !== "indexed" || r.indexed_version !== r.version)
        late.push(`${r.id}: ${r.index_state} at ${r.indexed_version}, stored ${r.version}`);
    }
    return late;
  };
  await waitUntil(
    "every listing indexed at its stored version",
    async () => (await behind()).length === 0,
    timeoutMs,
  ).catch(async (err) => {
    throw new Error(`${(err as Error).message}:\n${(await behind()).slice(0, 10).join("\n")}`);
  });
  const docs = (await opensearch.mget({ index: alias, body: { ids: ids.map(String) } } as never)).body as unknown as {
    docs: { _id: string; found: boolean; _version: number; _source: { title: string } }[];
  };
  const versions = new Map(
    (
      await api.sql<
        { id: string; version: number }[]
      >`SELECT id::text AS id, version FROM listings WHERE id = ANY(${ids}::bigint[])`
    ).map((r) => [Number(r.id), r.version]),
  );
  const wrong = docs.docs.filter(
    (d) => !d.found || d._source.title !== lastTitle.get(Number(d._id)) || d._version !== versions.get(Number(d._id)),
  );
  expect(wrong.map((d) => d._id)).toEqual([]);
}

test("two instances share the partitions and index every listing at its latest version", async () => {
  const joinsBefore = instances.map((p) => assignments(p, group));
  const externalIds = Array.from({ length: 12 }, () => uniqueName("many"));
  const ids = new Map<string, number>();
  const lastTitle = new Map<number, string>();
  const requestIds: string[] = [];
  // Four versions of each, interleaved across the listings.
  for (let v = 1; v <= 4; v++) {
    for (const externalId of externalIds) {
      const title = `${externalId} version ${v}`;
      const { id, requestId } = await write(externalId, title);
      ids.set(externalId, id);
      lastTitle.set(id, title);
      requestIds.push(requestId);
    }
  }
  await expectIndexedAtLatest([...ids.values()], lastTitle, 90_000);
  // Both instances indexed some of them, and neither had to join the group again meanwhile.
  const workers = instances.filter((p) => logLines(p, "event handled").some((l) => requestIds.includes(l.requestId)));
  expect(workers).toHaveLength(2);
  expect(instances.map((p) => assignments(p, group))).toEqual(joinsBefore);
}, 180_000);

test("SIGKILL of one instance while writes stream in hands its partitions to the other: every listing ends at its latest version", async () => {
  const split = await waitForSplit(instances, group, TOPIC, PARTITIONS);
  const [victim, survivor] = instances as [ServiceProcess, ServiceProcess];
  const externalIds = Array.from({ length: 10 }, () => uniqueName("kill"));
  const ids = new Map<string, number>();
  const lastTitle = new Map<number, string>();
  let running = true;
  let writes = 0;
  // Two writers, round robin over the listings, until told to stop.
  const writer = async (lane: number) => {
    for (let n = lane; running; n += 2) {
      const externalId = externalIds[n % externalIds.length]!;
      const title = `${externalId} write ${n}`;
      const { id } = await write(externalId, title);
      ids.set(externalId, id);
      lastTitle.set(id, title);
      writes++;
    }
  };
  const writers = [writer(0), writer(1)];
  await waitUntil("a first round of writes", async () => writes >= externalIds.length * 2, 60_000);
  expect(await victim.kill()).not.toBe(0);
  const killedAt = Date.now();
  // Writes go on while the group notices (a session timeout) and after the survivor took over.
  await waitUntil(
    "the survivor to own every partition",
    async () =>
      (await waitForSplit([survivor], group, TOPIC, PARTITIONS, { timeoutMs: 1_000 }).catch(() => null)) ?? false,
    60_000,
  );
  await Bun.sleep(Math.max(0, 2_000 - (Date.now() - killedAt)));
  running = false;
  await Promise.all(writers);

  await expectIndexedAtLatest([...ids.values()], lastTitle, 90_000);
  // The listings on the victim's partitions were indexed by the survivor after the kill.
  const onVictim = [...ids.values()].filter((id) => ownerOf(split, partitionOf(String(id), PARTITIONS)) === victim);
  const bySurvivor = new Set(
    logLines(survivor, "event handled")
      .filter((l) => l.topic === TOPIC)
      .map((l) => Number(l.aggregateId)),
  );
  expect(onVictim.filter((id) => !bySurvivor.has(id))).toEqual([]);
  expect(survivor.exitCode()).toBeNull();
}, 240_000);
