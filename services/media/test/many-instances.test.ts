// Two media instances as real processes (`bun services/media/src/main.ts`) in one consumer group, storing in the
// real S3-compatible server: they share the listing topic's partitions, every photo is downloaded and processed
// once (a 50-photo listing that works longer than the session timeout included: heartbeats and claim renewals
// keep it to one instance), and when one is SIGKILLed mid-download the other takes its partitions and its
// abandoned photos (claims run out after MEDIA_CLAIM_TIMEOUT_MS) with nothing lost.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Topics } from "@pss/contracts";
import { moveGroupToEnd, waitUntil } from "../../api/test/faults/support/fault-harness.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import {
  assignedPartitions,
  assignments,
  logLines,
  ownerOf,
  partitionOf,
  startInstances,
  waitForSplit,
  type ServiceProcess,
} from "../../../test/support/consumer-instances.ts";
import { uniqueName } from "../../../test/support/env.ts";
import { startImageServer, type ImageServer } from "./support/image-server.ts";
import { createTestStorage, type TestStorage } from "./support/media-harness.ts";

const TOPIC = Topics.listingEvents.name;
const PARTITIONS = Topics.listingEvents.partitions;
const SESSION_MS = 6_000;
const group = uniqueName("scale-media");
let api: ApiHarness;
let images: ImageServer;
let storage: TestStorage;
let partner: Partner;
let brokerId: string;
let instances: ServiceProcess[] = [];

beforeAll(async () => {
  [api, images, storage] = await Promise.all([startApi(), startImageServer(), createTestStorage("s3")]);
  partner = await api.createPartner();
  brokerId = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
  await moveGroupToEnd(api.kafka, group);
  instances = await startInstances("media", 2, {
    MEDIA_CONSUMER_GROUP: group,
    ...storage.env,
    MEDIA_ALLOWED_HOSTS: `127.0.0.1:${images.port}`,
    MEDIA_GC_INTERVAL_MS: "0",
    MEDIA_CONCURRENCY: "2",
    MEDIA_TOTAL_TIMEOUT_MS: "30000",
    // Short claims, renewed every 2 s while an instance works on them: a dead instance's photos are free again soon.
    MEDIA_CLAIM_TIMEOUT_MS: "6000",
    MEDIA_RETRY_POLL_MS: "500",
  });
  await waitForSplit(instances, group, TOPIC, PARTITIONS);
}, 150_000);

afterAll(async () => {
  images?.release("big");
  for (let i = 0; i < 20; i++) images?.release(`kill-${i}`);
  await Promise.all(instances.map((p) => p.stop()));
  images?.stop();
  await storage?.cleanup().catch(() => {});
  await api?.stop();
}, 60_000);

/** PUTs a listing with these photo paths (on the image server) under a request ID of its own; returns its ID. */
async function putListing(
  externalId: string,
  photoPaths: string[],
  requestId = uniqueName("req"),
): Promise<{ id: number; requestId: string }> {
  const res = await call(api.baseUrl, "PUT", `/partner/v1/listings/${externalId}`, {
    key: partner.apiKey,
    headers: { "x-request-id": requestId },
    body: sample.listing(brokerId, { photos: photoPaths.map((p, i) => ({ url: images.url(p), sortKey: i + 1 })) }),
  });
  expect([200, 201]).toContain(res.status);
  return { id: res.body.serviceListingId as number, requestId };
}

const photoStates = async (listingIds: number[]) =>
  (
    await api.sql<
      { state: string; n: number }[]
    >`SELECT state, count(*)::int AS n FROM listing_photos WHERE listing_id = ANY(${listingIds}::bigint[]) GROUP BY state`
  ).reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.state]: r.n }), {});

async function allReady(listingIds: number[], photos: number, timeoutMs: number): Promise<void> {
  await waitUntil(
    `${photos} photos to be ready (${JSON.stringify(await photoStates(listingIds))})`,
    async () => (await photoStates(listingIds)).ready === photos,
    timeoutMs,
  );
}

/** The "event handled" lines of a request across the instances: which instance handled it, how long it took. */
const handledBy = (requestId: string) =>
  instances.flatMap((p) =>
    logLines(p, "event handled")
      .filter((l) => l.requestId === requestId && l.topic === TOPIC)
      .map((l) => ({ p, durationMs: l.durationMs as number, outcome: l.outcome as string })),
  );

test("two instances share the partitions and process every photo once, a 50-photo listing working longer than the session included", async () => {
  const joinsBefore = instances.map((p) => assignments(p, group));
  // Twelve listings with two photos each, spread over the partitions by their IDs.
  const small: { id: number; requestId: string; paths: string[] }[] = [];
  for (let i = 0; i < 12; i++) {
    const paths = [`/photo.jpg?l=${i}&p=1`, `/photo-3.jpg?l=${i}&p=2`];
    small.push({ ...(await putListing(uniqueName("many"), paths)), paths });
  }
  // Fifty photos; one is held by the image host for longer than the session timeout.
  const bigPaths = ["/hold/big", ...Array.from({ length: 49 }, (_, i) => `/small.png?big=${i}`)];
  const big = await putListing(uniqueName("big"), bigPaths);
  await waitUntil(
    "the held photo of the big listing to be requested",
    async () => images.hits("/hold/big") > 0,
    60_000,
  );
  await Bun.sleep(SESSION_MS + 2_000);
  images.release("big");

  await allReady([...small.map((l) => l.id), big.id], small.length * 2 + 50, 150_000);

  // Each photo was downloaded once: exactly one instance claimed it, and its claim held while it waited.
  const hits = [...small.flatMap((l) => l.paths), ...bigPaths].map((path) => [path, images.hits(path)] as const);
  expect(hits.filter(([, n]) => n !== 1)).toEqual([]);
  // The last photo turns ready just before its handler returns and logs "event handled": wait for those lines.
  const unlogged = () =>
    [...small, big].filter((l) => !handledBy(l.requestId).some((h) => h.outcome === "handled")).map((l) => l.requestId);
  await waitUntil('every listing\'s "event handled" line', async () => unlogged().length === 0, 30_000).catch(
    (err: Error) => {
      throw new Error(`${err.message}; not logged: ${unlogged().join(", ")}`);
    },
  );
  // Both instances did part of the work.
  const owners = new Set(
    small.flatMap((l) =>
      handledBy(l.requestId)
        .filter((h) => h.outcome === "handled")
        .map((h) => h.p),
    ),
  );
  expect(owners.size).toBe(2);
  // The big listing's event was handled by one instance, in one go lasting longer than the session timeout, and
  // no instance had to join the group again meanwhile (no rebalance: its heartbeats went on while it worked).
  const bigHandled = handledBy(big.requestId).filter((h) => h.outcome === "handled");
  expect(bigHandled).toHaveLength(1);
  expect(bigHandled[0]!.durationMs).toBeGreaterThan(SESSION_MS);
  expect(instances.map((p) => assignments(p, group))).toEqual(joinsBefore);
  // One of the variants is really in the object store.
  const [row] = await api.sql<
    { variants: { key: string }[] }[]
  >`SELECT variants FROM listing_photos WHERE listing_id = ${big.id} AND state = 'ready' LIMIT 1`;
  expect(await storage.storage.stat(row!.variants[0]!.key)).not.toBeNull();
}, 240_000);

test("SIGKILL of one instance mid-download hands its partitions and its photos to the other: nothing is lost", async () => {
  const split = await waitForSplit(instances, group, TOPIC, PARTITIONS);
  const [victim, survivor] = instances as [ServiceProcess, ServiceProcess];
  // Listings without photos first, to know whose partition each one's events go to (the key is the listing ID).
  // At most one victim listing per partition: an instance handles a partition's events one after another, so a
  // second held listing on the same partition would not be requested until the first is released.
  const victims: number[] = [];
  const victimPartitions = new Set<number>();
  const others: number[] = [];
  const externalIds = new Map<number, string>();
  for (let i = 0; i < 30 && (victims.length < 2 || others.length < 2); i++) {
    const externalId = uniqueName("kill");
    const { id } = await putListing(externalId, []);
    externalIds.set(id, externalId);
    const partition = partitionOf(String(id), PARTITIONS);
    if (ownerOf(split, partition) !== victim) others.push(id);
    else if (!victimPartitions.has(partition)) {
      victimPartitions.add(partition);
      victims.push(id);
    }
  }
  expect(victims.length).toBeGreaterThan(0);
  // The victim's listings get a photo the image host holds back: the victim is stuck downloading when it dies.
  const held = victims.map((id, i) => ({ id, hold: `kill-${i}` }));
  for (const { id, hold } of held) await putListing(externalIds.get(id)!, [`/hold/${hold}`, `/photo-2.jpg?kill=${id}`]);
  for (const id of others) await putListing(externalIds.get(id)!, [`/photo-2.jpg?other=${id}`]);
  await waitUntil(
    "the victim to be downloading every held photo",
    async () => held.every(({ hold }) => images.hits(`/hold/${hold}`) > 0),
    60_000,
  );
  expect(await victim.kill()).not.toBe(0);
  for (const { hold } of held) images.release(hold);

  // New work after the kill, some of it on the dead instance's partitions.
  const after: number[] = [];
  for (let i = 0; i < 6; i++) after.push((await putListing(uniqueName("after"), [`/photo-3.jpg?after=${i}`])).id);

  // The survivor owns every partition once the group has noticed (one session timeout), and finishes everything:
  // the events the victim never committed come again, and its expired claims are taken up by the retry loop.
  await waitForSplit([survivor], group, TOPIC, PARTITIONS, { timeoutMs: 60_000 });
  expect(assignedPartitions(survivor, group, TOPIC)).toEqual([0, 1, 2, 3, 4, 5]);
  await allReady([...victims, ...others, ...after], victims.length * 2 + others.length + after.length, 120_000);
  // The held photos were finished by the survivor.
  const readyOnSurvivor = new Set(logLines(survivor, "image ready").map((l) => Number(l.listingId)));
  expect(victims.filter((id) => !readyOnSurvivor.has(id))).toEqual([]);
  // Photos nobody was working on when the victim died were downloaded once.
  const once = [...others.map((id) => `/photo-2.jpg?other=${id}`), ...after.map((_, i) => `/photo-3.jpg?after=${i}`)];
  expect(once.map((path) => [path, images.hits(path)]).filter(([, n]) => n !== 1)).toEqual([]);
  expect(survivor.exitCode()).toBeNull();
}, 240_000);
