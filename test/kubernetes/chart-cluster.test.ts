// Issue 33: the Helm chart on a real one-node Kubernetes (npm test's container part starts it:
// scripts/kubernetes/cluster.ts), with the development values (the servers in the cluster) and the images
// `npm run images` built, imported into the node. In one namespace of its own:
//
// 1. `helm install --wait`; a partner and a buyer use it: a listing with photos is searchable, its variants are in
//    the object store and served by the API, a webhook reaches a receiver, a lead is e-mailed once.
// 2. media scaled to 3 and indexer to 2; under steady writes one pod of each is deleted (1 s grace): 0 acknowledged
//    writes lost, 0 effects duplicated.
// 3. `helm upgrade --wait` to a new image tag under steady writes: 0 failed requests, 0 lost.
// 4. `helm uninstall` leaves no pod, job or PVC of the release.
//
// The photo host and the webhook receiver are this process, reached from the pods at the node's address; the API,
// PostgreSQL and the SMTP sink are reached from here at their ClusterIPs (kube-proxy serves the host too).
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { sample } from "../../services/api/test/support/harness.ts";
import { makePicture } from "../../services/media/test/support/image-server.ts";
import { DEV_VALUES, CHART } from "./support/chart.ts";
import { clusterEnv, clusterTestsUnavailable, splitImage, tools } from "./support/cluster-env.ts";
import { until } from "../support/until.ts";

const unavailable = clusterTestsUnavailable();
if (unavailable) console.error(`kubernetes chart tests skipped: ${unavailable}`);
const it = unavailable ? test.skip : test;

const token = `kz${crypto.randomUUID().replace(/-/g, "").slice(0, 10)}`;
const namespace = `pss-chart-${token.slice(2, 8)}`;
const release = "pss";
const prefix = `${release}-partner-syndication-service`;
const timings: Record<string, number> = {};
const seconds = (t0: number) => Math.round((Date.now() - t0) / 100) / 10;
const env = unavailable ? null : clusterEnv();
const { kubectl, helm } = env ? tools(env, namespace) : ({} as ReturnType<typeof tools>);

// --- this process: photo host and webhook receiver ------------------------------------------------------------
const pictures: Buffer[] = [];
interface Delivery {
  id: string;
  type: string;
  listing: number;
}
const deliveries: Delivery[] = [];
let photoHost: ReturnType<typeof Bun.serve> | undefined;
let receiver: ReturnType<typeof Bun.serve> | undefined;
let sql: postgres.Sql | undefined;
let apiBase = "";
let sinkBase = "";
let partner = { apiKey: "", partnerId: "" };
const brokerEmail = `leads-${token}@broker.example`;
const brokerId = `broker-${token}`;

/** A request to the API Service, each on a new connection: every request is balanced across the ready pods. */
function api(path: string, init: RequestInit & { key?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    connection: "close",
    ...(init.key ? { authorization: `Bearer ${init.key}` } : {}),
  };
  return fetch(`${apiBase}${path}`, { ...init, headers, keepalive: false, signal: AbortSignal.timeout(15_000) });
}

async function putListing(
  externalId: string,
  title: string,
  photos: string[],
): Promise<{ id: number | null; status: number }> {
  const res = await api(`/partner/v1/listings/${externalId}`, {
    method: "PUT",
    key: partner.apiKey,
    body: JSON.stringify(
      sample.listing(brokerId, {
        title,
        photos: photos.map((p, i) => ({ url: `http://${env!.nodeIp}:${photoHost!.port}/${p}.jpg`, sortKey: i + 1 })),
      }),
    ),
  }).catch(() => null);
  if (res?.status !== 201) return { id: null, status: res?.status ?? 0 };
  return { id: ((await res.json()) as { serviceListingId: number }).serviceListingId, status: 201 };
}

async function searchable(word: string, id: number): Promise<boolean> {
  const res = await api(`/v1/listings?q=${encodeURIComponent(word)}`);
  if (res.status !== 200) return false;
  const body = (await res.json()) as { results: { serviceListingId: number }[] };
  return body.results.some((r) => r.serviceListingId === id);
}

async function sinkMessages(): Promise<{ MessageID: string; To: { Address: string }[] }[]> {
  const res = await fetch(`${sinkBase}/api/v1/messages`, { signal: AbortSignal.timeout(5_000) });
  return ((await res.json()) as { messages: { MessageID: string; To: { Address: string }[] }[] }).messages;
}

/** A buyer's lead: its status (202 accepted; 0: no answer). */
async function sendLead(listingId: number, n: number): Promise<number> {
  const res = await api(`/v1/listings/${listingId}/leads`, {
    method: "POST",
    body: JSON.stringify({ name: `Buyer ${n}`, email: `buyer${n}@example.com`, message: `Lead ${n} for ${token}` }),
  }).catch(() => null);
  return res?.status ?? 0;
}

async function clusterIp(service: string): Promise<string> {
  return (await kubectl(["get", "service", `${prefix}-${service}`, "-o", "jsonpath={.spec.clusterIP}"])).trim();
}

async function podsOf(component: string): Promise<string[]> {
  const out = await kubectl([
    "get",
    "pods",
    "-l",
    `app.kubernetes.io/instance=${release},app.kubernetes.io/component=${component}`,
    "--field-selector=status.phase=Running",
    "-o",
    "jsonpath={.items[*].metadata.name}",
  ]);
  return out.split(/\s+/).filter(Boolean).sort();
}

function installValues(imageRef: string): string[] {
  const image = splitImage(imageRef);
  const i = env!.images;
  const set: Record<string, string> = {
    "image.repository": image.repository,
    "image.tag": image.tag,
    "image.pullPolicy": "Never",
    "development.imagePullPolicy": "Never",
    // The photo host and the receiver are this process, on the node's private address.
    "services.media.env.MEDIA_ALLOWED_HOSTS": `${env!.nodeIp}:${photoHost!.port}`,
    "services.webhooks.env.WEBHOOK_ALLOWED_HOSTS": `${env!.nodeIp}:${receiver!.port}`,
    // Every lead comes from this one address: the per-address limit (20 an hour) would refuse the later ones.
    "services.api.env.LEAD_RATE_LIMIT_PER_ADDRESS": "0",
  };
  const dev: Record<string, string> = {
    PSS_POSTGRES_IMAGE: "postgres",
    PSS_REDIS_IMAGE: "redis",
    PSS_KAFKA_IMAGE: "kafka",
    PSS_OPENSEARCH_IMAGE: "opensearch",
    PSS_S3_IMAGE: "s3",
    PSS_SMTP_IMAGE: "smtpSink",
  };
  for (const [variable, key] of Object.entries(dev)) if (i[variable]) set[`development.${key}.image`] = i[variable]!;
  return ["-f", DEV_VALUES, ...Object.entries(set).flatMap(([k, v]) => ["--set-string", `${k}=${v}`])];
}

beforeAll(async () => {
  if (unavailable) return;
  for (let i = 0; i < 8; i++)
    pictures.push(await makePicture(640, 480, "jpeg", { colour: { r: 30 * i, g: 255 - 30 * i, b: (90 * i) % 256 } }));
  photoHost = Bun.serve({
    hostname: "0.0.0.0",
    port: 0,
    fetch(req) {
      const n = Number(/(\d+)\.jpg$/.exec(new URL(req.url).pathname)?.[1] ?? 0);
      return new Response(pictures[n % pictures.length], { headers: { "content-type": "image/jpeg" } });
    },
  });
  receiver = Bun.serve({
    hostname: "0.0.0.0",
    port: 0,
    async fetch(req) {
      const body = (await req.json().catch(() => ({}))) as { type?: string; data?: { serviceListingId?: number } };
      deliveries.push({
        id: req.headers.get("webhook-id") ?? "",
        type: body.type ?? "",
        listing: Number(body.data?.serviceListingId ?? 0),
      });
      return new Response(null, { status: 204 });
    },
  });
  await runToolNs(["create", "namespace", namespace]);
}, 60_000);

async function runToolNs(args: string[]): Promise<string> {
  const { runTool } = await import("../../scripts/kubernetes/cluster.ts");
  return runTool([env!.kubectlBin, "--kubeconfig", env!.kubeconfig, ...args]);
}

afterAll(async () => {
  if (unavailable) return;
  await sql?.end({ timeout: 2 }).catch(() => {});
  // Whatever a failed step left: the release and the namespace go (the cluster is stopped after this file).
  await helm(["uninstall", release, "--wait", "--timeout", "2m"], { timeoutMs: 150_000 }).catch(() => {});
  await runToolNs(["delete", "namespace", namespace, "--wait=true", "--timeout=120s"]).catch(() => {});
  photoHost?.stop(true);
  receiver?.stop(true);
  console.error(`kubernetes chart timings (s): ${JSON.stringify(timings)}`);
}, 300_000);

it("helm install --wait brings the release up; a partner's listing with photos becomes searchable, its variants are in the object store, a webhook and one lead e-mail are delivered", async () => {
  let t0 = Date.now();
  await helm(["install", release, CHART, ...installValues(env!.images.PSS_IMAGE!), "--wait", "--timeout", "8m"], {
    timeoutMs: 500_000,
  });
  timings.install = seconds(t0);
  for (const c of [
    "api",
    "outbox-relay",
    "media",
    "indexer",
    "leads",
    "webhooks",
    "postgres",
    "redis",
    "kafka",
    "opensearch",
    "s3",
    "smtp-sink",
  ])
    expect([c, (await podsOf(c)).length]).toEqual([c, 1]);
  const migrate = await kubectl(["get", "job", `${prefix}-migrate-1`, "-o", "jsonpath={.status.succeeded}"]);
  expect(migrate).toBe("1");
  apiBase = `http://${await clusterIp("api")}:8080`;
  sinkBase = `http://${await clusterIp("smtp-sink")}:8025`;
  sql = postgres(`postgres://pss:pss@${await clusterIp("postgres")}:5432/pss`, { max: 2, onnotice: () => {} });

  // --- the services run as uid 1000 on a read-only root filesystem ------------------------------------------------
  expect((await kubectl(["exec", `deploy/${prefix}-api`, "--", "id", "-u"])).trim()).toBe("1000");
  const write = await kubectl(["exec", `deploy/${prefix}-api`, "--", "sh", "-c", "touch /app/probe"]).catch((e) =>
    String(e),
  );
  expect(write).toContain("Read-only file system");

  // --- an operator creates the first partner (the admin CLI in the API's pod, as NOTES.txt says) ----------------
  partner = JSON.parse(
    await kubectl([
      "exec",
      `deploy/${prefix}-api`,
      "--",
      "bun",
      "services/admin/src/cli.ts",
      "partners",
      "create",
      "--name",
      `Chart ${token}`,
      "--lead-tracking",
      "--json",
    ]),
  );
  expect(partner.apiKey).toStartWith("pss_live_");

  t0 = Date.now();
  const endpoint = await api(`/partner/v1/webhook-endpoints/hooks-${token}`, {
    method: "PUT",
    key: partner.apiKey,
    body: JSON.stringify({
      url: `http://${env!.nodeIp}:${receiver!.port}/hooks`,
      events: ["listing.published", "listing.media.processed", "lead.received"],
    }),
  });
  expect(endpoint.status).toBe(201);
  const broker = await api(`/partner/v1/brokers/${brokerId}`, {
    method: "PUT",
    key: partner.apiKey,
    body: JSON.stringify(sample.broker({ forwardingEmail: brokerEmail })),
  });
  expect(broker.status).toBe(201);
  const { id } = await putListing(`first-${token}`, `Corner bakery ${token}first`, ["first-1", "first-2"]);
  expect(id).not.toBeNull();

  await until("the listing to be searchable", () => searchable(`${token}first`, id!), 120_000);
  const rows = await until(
    "both photos to be ready",
    async () => {
      const r = await sql!<{ state: string; variants: { key: string }[] }[]>`
        SELECT state, variants FROM listing_photos WHERE listing_id = ${id!}`;
      return r.length === 2 && r.every((row) => row.state === "ready") ? r : null;
    },
    120_000,
  );
  const names = rows.flatMap((r) => r.variants.map((v) => v.key));
  expect(names.length).toBeGreaterThanOrEqual(2);
  const stored = new Set(
    (await kubectl(["exec", `statefulset/${prefix}-s3`, "--", "find", "/data/pss-media", "-type", "f"]))
      .split("\n")
      .map((f) => f.split("/").pop()),
  );
  for (const name of names) expect([name, stored.has(name)]).toEqual([name, true]);
  const variant = await api(`/media/${names[0]}`);
  expect(variant.status).toBe(200);
  expect((await variant.arrayBuffer()).byteLength).toBeGreaterThan(100);

  await until(
    "the listing.published webhook",
    async () => deliveries.some((d) => d.type === "listing.published" && d.listing === id),
    90_000,
  );
  expect(await sendLead(id!, 0)).toBe(202);
  await until(
    "the lead's e-mail in the SMTP sink",
    async () => (await sinkMessages()).some((m) => m.To.some((t) => t.Address === brokerEmail)),
    90_000,
  );
  await Bun.sleep(3_000); // a duplicate would arrive now
  expect((await sinkMessages()).filter((m) => m.To.some((t) => t.Address === brokerEmail)).length).toBe(1);
  timings.journey = seconds(t0);
}, 720_000);

/** Steady writes for `ms` (a listing with two photos every 500 ms, a lead for every third); what was acknowledged. */
async function steadyWrites(label: string, ms: number, during: () => Promise<void>) {
  const t0 = Date.now();
  const acked: { id: number; word: string }[] = [];
  const leads: number[] = [];
  const failures: number[] = [];
  let attempted = 0;
  let stopAt = t0 + ms;
  const writer = (async () => {
    for (let n = 1; Date.now() < stopAt; n++) {
      const tick = Date.now();
      attempted++;
      const word = `${token}${label}${n}`;
      const { id, status } = await putListing(`${label}-${token}-${n}`, `Steady listing ${word}`, [
        `${label}-${n}-a-${n % 8}`,
        `${label}-${n}-b-${(n + 3) % 8}`,
      ]);
      if (id === null) failures.push(status);
      else {
        acked.push({ id, word });
        if (n % 3 === 0) {
          const lead = await sendLead(id, n);
          if (lead === 202) leads.push(id);
          else failures.push(lead);
        }
      }
      await Bun.sleep(Math.max(0, 500 - (Date.now() - tick)));
    }
  })();
  try {
    await during();
  } finally {
    stopAt = Math.min(stopAt, Date.now() + ms); // at least until the planned end, never forever
  }
  await writer;
  return { acked, leads, failures, attempted, seconds: seconds(t0) };
}

/** Every acknowledged write converges, and no effect happened twice. */
async function expectConverged(acked: { id: number; word: string }[], leadsBefore: number, leads: number[]) {
  const ids = acked.map((a) => a.id);
  await until(
    "every acknowledged listing's photos to be ready",
    async () => {
      const [row] = await sql!<{ ready: number; total: number }[]>`
        SELECT count(*) FILTER (WHERE state = 'ready')::int AS ready, count(*)::int AS total
        FROM listing_photos WHERE listing_id = ANY(${ids})`;
      return row!.ready === ids.length * 2 && row!.total === ids.length * 2;
    },
    180_000,
  );
  const missing = new Set(acked);
  await until(
    "every acknowledged listing to be searchable",
    async () => {
      for (const a of [...missing]) if (await searchable(a.word, a.id)) missing.delete(a);
      return missing.size === 0;
    },
    180_000,
  );
  await until(
    "every listing.published and listing.media.processed webhook",
    async () =>
      ids.every(
        (id) =>
          deliveries.some((d) => d.listing === id && d.type === "listing.published") &&
          deliveries.some((d) => d.listing === id && d.type === "listing.media.processed"),
      ),
    180_000,
  );
  const mine = async () => (await sinkMessages()).filter((m) => m.To.some((t) => t.Address === brokerEmail));
  await until("every lead's e-mail", async () => (await mine()).length >= leadsBefore + leads.length, 180_000);
  await Bun.sleep(5_000); // late duplicates would arrive now
  for (const type of ["listing.published", "listing.media.processed"]) {
    const perListing = ids.map(
      (id) => new Set(deliveries.filter((d) => d.listing === id && d.type === type).map((d) => d.id)).size,
    );
    expect([type, perListing.filter((c) => c !== 1).length]).toEqual([type, 0]);
  }
  const mails = await mine();
  expect(mails.length).toBe(leadsBefore + leads.length);
  expect(new Set(mails.map((m) => m.MessageID)).size).toBe(mails.length);
}

it("scaled to media=3 and indexer=2, with one pod of each deleted under steady writes: 0 acknowledged writes lost, 0 effects duplicated", async () => {
  expect(partner.apiKey).not.toBe(""); // the first test made the partner
  let t0 = Date.now();
  await kubectl(["scale", `deploy/${prefix}-media`, "--replicas=3"]);
  await kubectl(["scale", `deploy/${prefix}-indexer`, "--replicas=2"]);
  for (const d of ["media", "indexer"])
    await kubectl(["rollout", "status", `deploy/${prefix}-${d}`, "--timeout=300s"], { timeoutMs: 320_000 });
  expect((await podsOf("media")).length).toBe(3);
  expect((await podsOf("indexer")).length).toBe(2);
  timings.scaleUp = seconds(t0);

  const leadsBefore = 1;
  t0 = Date.now();
  const run = await steadyWrites("s", 20_000, async () => {
    await Bun.sleep(6_000);
    const [media] = await podsOf("media");
    const [indexer] = await podsOf("indexer");
    // Deleted with 1 s of grace: shorter than the preStop pause, so each is killed mid-work.
    await kubectl(["delete", "pod", media!, indexer!, "--grace-period=1", "--wait=false"]);
  });
  timings.scaleLoad = run.seconds;
  console.error(
    `kubernetes scale test: ${run.acked.length} of ${run.attempted} listing writes acknowledged, ${run.leads.length} leads, failures ${JSON.stringify(run.failures)}`,
  );
  expect(run.acked.length).toBeGreaterThanOrEqual(Math.floor(run.attempted * 0.8));
  t0 = Date.now();
  await expectConverged(run.acked, leadsBefore, run.leads);
  timings.scaleConverge = seconds(t0);
  // The Deployments replaced the deleted pods.
  await until("media back to 3 pods", async () => (await podsOf("media")).length === 3, 120_000);
  await until("indexer back to 2 pods", async () => (await podsOf("indexer")).length === 2, 120_000);
  leadsSoFar = leadsBefore + run.leads.length;
}, 600_000);

let leadsSoFar = 1;

it("helm upgrade --wait to a new image tag under steady writes: 0 failed requests, 0 acknowledged writes lost", async () => {
  expect(partner.apiKey).not.toBe("");
  const t0 = Date.now();
  let upgradeSeconds = 0;
  const run = await steadyWrites("u", 15_000, async () => {
    await Bun.sleep(3_000);
    const t1 = Date.now();
    await helm(
      [
        "upgrade",
        release,
        CHART,
        ...installValues(env!.upgradeImage),
        // What the scale test set by hand stays (a rolling upgrade replaces every one of those pods too).
        "--set",
        "services.media.replicas=3",
        "--set",
        "services.indexer.replicas=2",
        "--wait",
        "--timeout",
        "6m",
      ],
      { timeoutMs: 380_000 },
    );
    upgradeSeconds = seconds(t1);
  });
  timings.upgrade = upgradeSeconds;
  console.error(
    `kubernetes upgrade test: ${run.acked.length} of ${run.attempted} writes acknowledged during ${run.seconds} s (upgrade ${upgradeSeconds} s), failures ${JSON.stringify(run.failures)}`,
  );
  expect(run.failures).toEqual([]);
  expect(run.acked.length).toBe(run.attempted);
  const { tag } = splitImage(env!.upgradeImage);
  // Every pod that is not on its way out runs the new tag (old ones may still be finishing their shutdown).
  const pods = JSON.parse(
    await kubectl(["get", "pods", "-l", `app.kubernetes.io/instance=${release}`, "-o", "json"]),
  ) as {
    items: {
      metadata: { labels: Record<string, string>; deletionTimestamp?: string };
      spec: { containers: { image: string }[] };
    }[];
  };
  for (const c of ["api", "outbox-relay", "media", "indexer", "leads", "webhooks"]) {
    const images = pods.items
      .filter((p) => p.metadata.labels["app.kubernetes.io/component"] === c && !p.metadata.deletionTimestamp)
      .map((p) => p.spec.containers[0]!.image);
    expect([c, images.length > 0 && images.every((i) => i.endsWith(`:${tag}`))]).toEqual([c, true]);
  }
  await expectConverged(run.acked, leadsSoFar, run.leads);
  timings.upgradeTotal = seconds(t0);
}, 600_000);

it("helm uninstall leaves no pod, job or PVC of the release", async () => {
  const t0 = Date.now();
  await sql?.end({ timeout: 2 }).catch(() => {});
  sql = undefined;
  await helm(["uninstall", release, "--wait", "--timeout", "3m"], { timeoutMs: 200_000 });
  const left = await until(
    "the release's pods, jobs and PVCs to be gone",
    async () => {
      const out = await kubectl(["get", "pods,jobs,pvc", "-l", `app.kubernetes.io/instance=${release}`, "-o", "name"]);
      const pvcs = await kubectl(["get", "pvc", "-o", "name"]);
      return out.trim() === "" && pvcs.trim() === "" ? "none" : null;
    },
    180_000,
  );
  expect(left).toBe("none");
  timings.uninstall = seconds(t0);
}, 300_000);
