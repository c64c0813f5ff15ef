// `media retry` as the runbook (docs/operations.md, "Media retry") has an operator run it: photos and an avatar
// failed while their image host was down; once it answers again, retrying one listing, then one partner, then
// every transient failure re-processes exactly those, and a permanent failure is only retried when asked by
// scope (and fails again for the same reason).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { uniqueName } from "../../../../test/support/env.ts";
import { startImageServer, type ImageServer } from "../../../media/test/support/image-server.ts";
import { startMedia, until, type MediaHarness } from "../../../media/test/support/media-harness.ts";
import { admin, json } from "../support/admin-cli.ts";
import { sample, startApi, type ApiHarness, type Partner } from "../support/harness.ts";

let images: ImageServer;
let api: ApiHarness;
let media: MediaHarness;
let partnerA: Partner;
let partnerB: Partner;
/** The image host that goes down and comes back, on the same port. */
let host: ReturnType<typeof Bun.serve> | null = null;
let hostPort = 0;

function startHost(port: number) {
  host = Bun.serve({
    port,
    hostname: "127.0.0.1",
    fetch(req) {
      const image = images.images[new URL(req.url).pathname];
      return image
        ? new Response(image, { headers: { "content-type": "image/jpeg" } })
        : new Response("not found", { status: 404 });
    },
  });
  hostPort = host.port!;
}
const onHost = (path: string) => `http://127.0.0.1:${hostPort}${path}`;

beforeAll(async () => {
  images = await startImageServer();
  // Take a free port for the host, then close it: the host is down from the start.
  startHost(0);
  host!.stop(true);
  host = null;
  api = await startApi();
  partnerA = await api.createPartner();
  partnerB = await api.createPartner();
  media = await startMedia({
    partners: [partnerA.partnerId, partnerB.partnerId],
    env: {
      MEDIA_ALLOWED_HOSTS: `127.0.0.1:${images.port},127.0.0.1:${hostPort}`,
      MEDIA_MAX_ATTEMPTS: "2",
      MEDIA_RETRY_BASE_MS: "50",
      MEDIA_RETRY_POLL_MS: "50",
      MEDIA_CONNECT_TIMEOUT_MS: "1000",
      MEDIA_TOTAL_TIMEOUT_MS: "3000",
    },
  });
});
afterAll(async () => {
  await media?.stop();
  await api?.stop();
  host?.stop(true);
  images?.stop();
});

type Photo = { url: string; state: string; failureReason: string | null };

async function photos(p: Partner, externalId: string): Promise<Photo[]> {
  const res = await p.get(`/partner/v1/listings/${externalId}`);
  expect(res.status).toBe(200);
  return res.body.listing.photos;
}
const states = async (p: Partner, externalId: string) =>
  (await photos(p, externalId)).map((ph) => [ph.state, ph.failureReason]);
const avatarOf = async (p: Partner, brokerId: string) =>
  (await p.get(`/partner/v1/brokers/${brokerId}`)).body.broker.avatar as {
    state: string;
    failureReason: string | null;
  };

async function settled(p: Partner, externalId: string): Promise<Photo[]> {
  return until(`photos of ${externalId} to settle`, async () => {
    const list = await photos(p, externalId);
    return list.every((ph) => ph.state !== "pending") ? list : null;
  });
}

async function listing(p: Partner, brokerId: string, photoUrls: string[]): Promise<{ externalId: string; id: number }> {
  const externalId = uniqueName("listing");
  const res = await p.put(
    `/partner/v1/listings/${externalId}`,
    sample.listing(brokerId, { photos: photoUrls.map((url, i) => ({ url, sortKey: i + 1 })) }),
  );
  expect(res.status).toBe(201);
  return { externalId, id: res.body.serviceListingId };
}

test("media retry by listing, by partner and for every transient failure re-processes failed photos once the host answers again", async () => {
  const brokerA = uniqueName("broker");
  expect(
    (await partnerA.put(`/partner/v1/brokers/${brokerA}`, sample.broker({ avatarUrl: onHost("/avatar.jpg") }))).status,
  ).toBe(201);
  const brokerB = uniqueName("broker");
  expect((await partnerB.put(`/partner/v1/brokers/${brokerB}`, sample.broker())).status).toBe(201);
  const one = await listing(partnerA, brokerA, [onHost("/photo.jpg"), onHost("/photo-2.jpg")]);
  // One photo on the down host, one the (working) host answers 404 for: a failure no retry fixes.
  const two = await listing(partnerA, brokerA, [onHost("/photo-3.jpg"), images.url("/missing.jpg")]);
  const three = await listing(partnerB, brokerB, [onHost("/small.png")]);

  const refused = ["failed", "connection refused"];
  const notFound = ["failed", "HTTP 404 from image host"];
  for (const [p, l] of [
    [partnerA, one],
    [partnerA, two],
    [partnerB, three],
  ] as const)
    await settled(p, l.externalId);
  expect(await states(partnerA, one.externalId)).toEqual([refused, refused]);
  expect(await states(partnerA, two.externalId)).toEqual([refused, notFound]);
  expect(await states(partnerB, three.externalId)).toEqual([refused]);
  await until("the avatar to fail", async () => (await avatarOf(partnerA, brokerA)).state === "failed");
  expect(await avatarOf(partnerA, brokerA)).toMatchObject({ state: "failed", failureReason: "connection refused" });

  // The host answers again; failed stays failed until someone asks.
  startHost(hostPort);

  // One listing.
  const byListing = json(await admin(["media", "retry", "--listing", String(one.id)]), "media retry --listing");
  expect(byListing).toMatchObject({ photos: 2, avatars: 0 });
  expect(byListing.reset.map((r: any) => [r.kind, r.listingId, r.url, r.reason]).sort()).toEqual([
    ["photo", String(one.id), onHost("/photo-2.jpg"), "connection refused"],
    ["photo", String(one.id), onHost("/photo.jpg"), "connection refused"],
  ]);
  expect((await settled(partnerA, one.externalId)).map((ph) => ph.state)).toEqual(["ready", "ready"]);
  expect(await states(partnerA, two.externalId)).toEqual([refused, notFound]);
  expect(await states(partnerB, three.externalId)).toEqual([refused]);

  // One partner: every failed photo and avatar of it, whatever the reason.
  const byPartner = json(await admin(["media", "retry", "--partner", partnerA.partnerId]), "media retry --partner");
  expect(byPartner).toMatchObject({ photos: 2, avatars: 1 });
  expect((await settled(partnerA, two.externalId)).map((ph) => [ph.state, ph.failureReason])).toEqual([
    ["ready", null],
    notFound,
  ]);
  await until("the avatar to be ready", async () => (await avatarOf(partnerA, brokerA)).state === "ready");
  expect(await states(partnerB, three.externalId)).toEqual([refused]);

  // Every transient failure (any partner); the permanent one is left alone.
  const transient = json(await admin(["media", "retry", "--all-transient"]), "media retry --all-transient");
  const mine = transient.reset.filter((r: any) => [one.id, two.id, three.id].map(String).includes(r.listingId));
  expect(mine.map((r: any) => [r.listingId, r.url, r.reason])).toEqual([
    [String(three.id), onHost("/small.png"), "connection refused"],
  ]);
  expect((await settled(partnerB, three.externalId)).map((ph) => ph.state)).toEqual(["ready"]);
  expect(await states(partnerA, two.externalId)).toEqual([["ready", null], notFound]);
}, 150_000);
