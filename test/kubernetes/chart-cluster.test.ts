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
import { DEV_VALUES, CHART } from "./support/chart.ts";
import { chartTestContext, clusterTestsUnavailable, createFirstPartner, splitImage } from "./support/cluster-env.ts";
import { type Journey, type Mail, startJourney } from "./support/journey.ts";
import { until } from "../support/until.ts";

const unavailable = clusterTestsUnavailable();
if (unavailable) console.error(`kubernetes chart tests skipped: ${unavailable}`);
const it = unavailable ? test.skip : test;

const { token, release, prefix, timings, seconds, env, kubectl, helm, ...context } = chartTestContext(
  "chart",
  unavailable,
);
const { clusterIp } = context;

let journey: Journey;
let sql: postgres.Sql | undefined;
let sinkBase = "";
let partner = { apiKey: "" };

/** The SMTP sink's messages (mailpit's API). */
async function sinkMessages(): Promise<Mail[]> {
  const res = await fetch(`${sinkBase}/api/v1/messages`, { signal: AbortSignal.timeout(5_000) });
  const body = (await res.json()) as { messages: { MessageID: string; To: { Address: string }[] }[] };
  return body.messages.map((m) => ({ id: m.MessageID, to: m.To.map((t) => t.Address) }));
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
    "services.media.env.MEDIA_ALLOWED_HOSTS": `${env!.nodeIp}:${journey.photoHost.port}`,
    "services.webhooks.env.WEBHOOK_ALLOWED_HOSTS": `${env!.nodeIp}:${journey.receiver.port}`,
    // Every lead comes from this one address (to the marketplace, which takes buyers' leads): the per-address
    // limit (20 an hour) would refuse the later ones.
    "services.marketplace.env.LEAD_RATE_LIMIT_PER_ADDRESS": "0",
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
  journey = await startJourney({ nodeIp: env!.nodeIp, token });
  await context.createNamespace();
}, 60_000);

afterAll(async () => {
  if (unavailable) return;
  await sql?.end({ timeout: 2 }).catch(() => {});
  await context.removeRelease();
  journey?.stop();
  console.error(`kubernetes chart timings (s): ${JSON.stringify(timings)}`);
}, 300_000);

it("helm install --wait brings the release up; a partner's listing with photos becomes searchable, its variants are in the object store, a webhook and one lead e-mail are delivered", async () => {
  let t0 = Date.now();
  await context.explained(
    helm(["install", release, CHART, ...installValues(env!.images.PSS_IMAGE!), "--wait", "--timeout", "8m"], {
      timeoutMs: 500_000,
    }),
  );
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
  const apiBase = `http://${await clusterIp("api")}:8080`;
  const marketplaceBase = `http://${await clusterIp("marketplace")}:8080`;
  sinkBase = `http://${await clusterIp("smtp-sink")}:8025`;
  sql = postgres(`postgres://pss:pss@${await clusterIp("postgres")}:5432/pss`, { max: 2, onnotice: () => {} });

  // --- the services run as uid 1000 on a read-only root filesystem ------------------------------------------------
  expect((await kubectl(["exec", `deploy/${prefix}-api`, "--", "id", "-u"])).trim()).toBe("1000");
  const write = await kubectl(["exec", `deploy/${prefix}-api`, "--", "sh", "-c", "touch /app/probe"]).catch((e) =>
    String(e),
  );
  expect(write).toContain("Read-only file system");

  // --- an operator creates the first partner (the admin CLI in the API's pod, as NOTES.txt says) ----------------
  partner = await createFirstPartner(kubectl, prefix, `Chart ${token}`);
  expect(partner.apiKey).toStartWith("pss_live_");

  t0 = Date.now();
  await journey.setUpPartner(apiBase, marketplaceBase, partner.apiKey);
  await journey.journey({
    sql,
    mails: sinkMessages,
    stored: async () =>
      new Set(
        (await kubectl(["exec", `statefulset/${prefix}-s3`, "--", "find", "/data/pss-media", "-type", "f"]))
          .split("\n")
          .map((f) => f.split("/").pop()!),
      ),
  });
  timings.journey = seconds(t0);
}, 720_000);

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
  const run = await journey.steadyWrites("s", 20_000, async () => {
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
  await journey.expectConverged({ sql: sql!, acked: run.acked, leadsBefore, leads: run.leads, mails: sinkMessages });
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
  const run = await journey.steadyWrites("u", 15_000, async () => {
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
  for (const c of ["api", "marketplace", "outbox-relay", "media", "indexer", "leads", "webhooks"]) {
    const images = pods.items
      .filter((p) => p.metadata.labels["app.kubernetes.io/component"] === c && !p.metadata.deletionTimestamp)
      .map((p) => p.spec.containers[0]!.image);
    expect([c, images.length > 0 && images.every((i) => i.endsWith(`:${tag}`))]).toEqual([c, true]);
  }
  await journey.expectConverged({
    sql: sql!,
    acked: run.acked,
    leadsBefore: leadsSoFar,
    leads: run.leads,
    mails: sinkMessages,
  });
  timings.upgradeTotal = seconds(t0);
}, 600_000);

it("helm uninstall leaves nothing of the release but the generated webhook key it keeps (helm.sh/resource-policy: keep), and no PVC", async () => {
  const t0 = Date.now();
  await sql?.end({ timeout: 2 }).catch(() => {});
  sql = undefined;
  await helm(["uninstall", release, "--wait", "--timeout", "3m"], { timeoutMs: 200_000 });
  const kept = [`secret/${prefix}-webhook-key`];
  const left = await until(
    "the release's objects and PVCs to be gone",
    async () => {
      const out = await context.leftovers();
      const pvcs = await kubectl(["get", "pvc", "-o", "name"]);
      return JSON.stringify(out) === JSON.stringify(kept) && pvcs.trim() === "" ? out : null;
    },
    180_000,
  );
  expect(left).toEqual(kept);
  timings.uninstall = seconds(t0);
}, 300_000);
