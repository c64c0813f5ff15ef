// The backup and restore drill (docs/operations.md, "Backup and restore") with the real servers and the admin CLI
// run as operators run it: data written through the API into a database of its own and an object-store prefix
// of its own, `admin backup`, both destroyed, `admin restore` into a new empty database and the emptied store,
// then every listing, broker, lead count, webhook endpoint (and its secret) and photo must be what it was, and
// search complete after `admin reindex`. Also: what restore refuses, and backups nobody can forge (issue 37, item 7:
// a manifest sealed with a key no backup holds, no webhook key unless asked and then sealed with a passphrase, no
// secret the API makes again, a directory only its owner reads).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createHash, randomBytes } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { mediaRelativePath } from "@pss/contracts";
import { migrate } from "@pss/database";
import {
  contentName,
  createS3MediaStorage,
  createSecretBox,
  parseSecretKey,
  type S3StorageConfig,
} from "@pss/service-kit";
import { recordLeads } from "../../leads/src/counting/count-recorder.ts";
import { signedHeaders } from "../../webhooks/src/delivery/signing.ts";
import { verifyWebhook } from "../../../packages/sdk/src/index.ts";
import { signManifest } from "../../admin/src/backup/signature.ts";
import { generateApiKey, hashApiKey, keyPrefix } from "../src/auth/api-key.ts";
import { testS3Env, testUrls, uniqueName } from "../../../test/support/env.ts";
import { tableDigests } from "../../../test/support/table-digests.ts";
import { admin, adminEnv, json } from "./support/admin-cli.ts";
import { sample, startApi, type ApiHarness, type Partner } from "./support/harness.ts";

const urls = testUrls();
const dbUrl = (name: string) => {
  const u = new URL(urls.DATABASE_URL);
  u.pathname = `/${name}`;
  return u.toString();
};
// Databases of this run, named after the test database so parallel checkouts never meet.
const base = `${new URL(urls.DATABASE_URL).pathname.slice(1)}_drill_${Math.random().toString(36).slice(2, 8)}`;
const SOURCE = `${base}_src`;
const RESTORED = `${base}_dst`;
const SPARE = `${base}_spare`;
const server = postgres(dbUrl("postgres"), { max: 1, onnotice: () => {} });

const s3 = testS3Env();
const store: S3StorageConfig = {
  kind: "s3",
  endpoint: s3.S3_ENDPOINT,
  bucket: s3.S3_BUCKET,
  region: s3.S3_REGION,
  accessKeyId: s3.S3_ACCESS_KEY_ID,
  secretAccessKey: s3.S3_SECRET_ACCESS_KEY,
  forcePathStyle: true,
  prefix: `${uniqueName("backup-drill")}/`,
  requestTimeoutMs: 10_000,
};
const storage = createS3MediaStorage(store);
const work = mkdtempSync(join(tmpdir(), "pss-backup-drill-"));
const backupDir = join(work, "backup");
/** A backup made without --with-webhook-key (the default), of the same source. */
const plainDir = join(work, "plain");
const alias = uniqueName("backup-drill-listings");
/** BACKUP_SIGNING_KEY of this run: the operators' key, kept apart from every backup. */
const signingKey = randomBytes(32);
const PASSPHRASE = "correct horse battery staple";

/** The CLI's environment: the services' settings for `database`, this test's store prefix. */
const cliEnv = (database: string, extra: Record<string, string | undefined> = {}) =>
  adminEnv({
    DATABASE_URL: dbUrl(database),
    MEDIA_STORAGE: "s3",
    ...s3,
    S3_PREFIX: store.prefix,
    OPENSEARCH_INDEX_ALIAS: alias,
    BACKUP_SIGNING_KEY: signingKey.toString("base64"),
    ...extra,
  });

async function createDatabase(name: string, migrated: boolean) {
  await server.unsafe(`CREATE DATABASE "${name}"`);
  if (!migrated) return;
  const sql = postgres(dbUrl(name), { max: 1, onnotice: () => {} });
  await migrate(sql).finally(() => sql.end());
}
const dropDatabase = (name: string) => server.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);

async function storedNames(): Promise<string[]> {
  const names: string[] = [];
  for await (const f of storage.list()) names.push(f.name);
  return names.sort();
}

// What the source answered before the backup, compared with what the restored database answers.
let api: ApiHarness;
let partner: Partner;
const brokerIds = ["drill-broker-1", "drill-broker-2"];
const listingIds = ["drill-listing-1", "drill-listing-2", "drill-listing-3"];
const photos: { name: string; bytes: Uint8Array }[] = [];
let webhookSecret: string;
let before: {
  brokers: unknown[];
  listings: any[];
  leadCount: unknown;
  endpoint: unknown;
  tables: Awaited<ReturnType<typeof tableDigests>>;
};
let backup: Record<string, any>;
let plain: Record<string, any>;
let restore: Record<string, any>;

beforeAll(async () => {
  await createDatabase(SOURCE, true);
  api = await startApi({ databaseUrl: dbUrl(SOURCE), relay: false });
  partner = await api.createPartner({ leadTracking: true });
  for (const [i, id] of brokerIds.entries())
    expect((await partner.put(`/partner/v1/brokers/${id}`, sample.broker({ name: `Broker ${i}` }))).status).toBe(201);
  for (const [i, id] of listingIds.entries()) {
    const res = await partner.put(
      `/partner/v1/listings/${id}`,
      sample.listing(brokerIds[i % 2]!, { title: `Drill listing ${i}`, description: `Business number ${i} for sale.` }),
    );
    expect(res.status).toBe(201);
  }
  // Photo variants as the media service leaves them: stored objects, and records naming them.
  for (let i = 0; i < 4; i++) {
    const bytes = crypto.getRandomValues(new Uint8Array(2048 + i * 511));
    const name = contentName(bytes, "webp");
    await storage.put(name, bytes, "image/webp");
    photos.push({ name, bytes });
  }
  const [first, second] = listingIds.slice(0, 2);
  for (const [i, externalId] of [first, second].entries()) {
    const variants = photos
      .slice(i * 2, i * 2 + 2)
      .map((p, j) => ({ width: 400 * (j + 1), height: 300, format: "webp", key: p.name }));
    await api.sql`
      UPDATE listing_photos p SET state = 'ready', width = 800, height = 300, variants = ${api.sql.json(variants)},
        media_names = ${variants.map((v) => v.key)}::text[]
      FROM listings l WHERE p.listing_id = l.id AND l.external_id = ${externalId!}`;
  }
  await recordLeads(
    api.sql,
    Array.from({ length: 5 }, (_, i) => ({
      leadId: crypto.randomUUID(),
      serviceListingId: 1,
      serviceBrokerId: "1",
      officeId: partner.officeId,
      organizationId: partner.organizationId,
      createdAt: new Date(Date.UTC(2026, 0, 1 + i)).toISOString(),
    })),
  );
  const endpoint = await partner.put("/partner/v1/webhook-endpoints/drill-crm", {
    url: "https://crm.example.com/hooks/pss",
    events: ["listing.published", "listing.unpublished"],
  });
  expect(endpoint.status).toBe(201);
  webhookSecret = endpoint.body.secret;

  before = {
    brokers: await Promise.all(brokerIds.map(async (id) => (await partner.get(`/partner/v1/brokers/${id}`)).body)),
    listings: await Promise.all(listingIds.map(async (id) => (await partner.get(`/partner/v1/listings/${id}`)).body)),
    leadCount: (await partner.get(`/partner/v1/offices/${partner.officeId}/leads/count`)).body,
    endpoint: (await partner.get("/partner/v1/webhook-endpoints/drill-crm")).body,
    tables: await tableDigests(api.sql),
  };
  expect((before.leadCount as { totalLeads: number }).totalLeads).toBe(5);
  expect(before.listings.every((l) => l.status === "success")).toBe(true);
  // The secrets the API makes again: yesterday's and today's statistics day keys, the preview-link secret.
  await api.sql`
    INSERT INTO listing_stats_day_keys (day, key) VALUES (current_date - 1, ${randomBytes(32)}), (current_date, ${randomBytes(32)})
    ON CONFLICT (day) DO NOTHING`;
  await api.sql`INSERT INTO preview_link_secret (id, secret) VALUES (1, ${randomBytes(32)}) ON CONFLICT (id) DO NOTHING`;
  await api.stop();

  // The target exists already, empty, readable by everyone: the backup makes it its owner's alone.
  mkdirSync(backupDir, { mode: 0o755 });
  chmodSync(backupDir, 0o755);
  backup = json(
    await admin(["backup", "--to", backupDir, "--with-webhook-key"], cliEnv(SOURCE), `${PASSPHRASE}\n`),
    "admin backup",
  );
  plain = json(await admin(["backup", "--to", plainDir], cliEnv(SOURCE)), "admin backup (default)");

  // Destroyed: the database and every object in the store.
  await dropDatabase(SOURCE);
  for (const p of photos) await storage.delete(p.name);
  expect(await storedNames()).toEqual([]);

  await createDatabase(RESTORED, false);
  restore = json(
    await admin(
      ["restore", "--from", backupDir, "--webhook-key-to", join(work, "restored-webhook-key")],
      cliEnv(RESTORED, { WEBHOOK_SECRET_KEY: undefined }),
      `${PASSPHRASE}\n`,
    ),
    "admin restore",
  );
  api = await startApi({ databaseUrl: dbUrl(RESTORED), relay: false, mediaStorage: storage });
  // The measured times and the recovery point, for docs/operations.md.
  console.error(
    `backup drill: recovery point ${backup.recoveryPoint} (snapshot ${backup.snapshot}); ${backup.rows} rows in ${backup.tables} tables, ${backup.objects} objects (${backup.objectBytes} bytes); backup ${backup.durationsMs.total} ms, restore ${restore.durationsMs.total} ms`,
  );
}, 120_000);

afterAll(async () => {
  await api?.stop();
  for (const p of photos) await storage.delete(p.name).catch(() => {});
  for (const name of [SOURCE, RESTORED, SPARE]) await dropDatabase(name).catch(() => {});
  await server.end();
  const aliased = await fetch(`${urls.OPENSEARCH_URL}/_alias/${alias}`).then((r) => (r.ok ? r.json() : {}));
  for (const index of Object.keys(aliased as object))
    await fetch(`${urls.OPENSEARCH_URL}/${index}`, { method: "DELETE" });
  rmSync(work, { recursive: true, force: true });
});

describe("backup, destroy, restore", () => {
  test("the backup names its recovery point, every table, the objects and the webhook key (a 0600 file)", () => {
    expect(Date.parse(backup.recoveryPoint)).toBeGreaterThan(Date.now() - 300_000);
    expect(backup.snapshot).toMatch(/^\d+:\d+:/);
    expect(backup.objects).toBe(photos.length);
    expect(backup.rows).toBe(Object.values(before.tables).reduce((n, t) => n + t.rows, 0));
    expect(backup.webhookKey.keyId).toMatch(/^[0-9a-f]{8}$/);
    expect(backup.signedWith.keyId).toBe(createHash("sha256").update(signingKey).digest("hex").slice(0, 8));
    expect(statSync(join(backupDir, "webhook-secret-key.enc")).mode & 0o777).toBe(0o600);
    const manifest = JSON.parse(readFileSync(join(backupDir, "manifest.json"), "utf8"));
    expect(manifest.database.tables.map((t: { name: string }) => t.name)).not.toContain("leader_leases");
    expect(restore.recoveryPoint).toBe(backup.recoveryPoint);
  });

  test("every table is restored row for row", async () => {
    expect(await tableDigests(api.sql)).toEqual(before.tables);
  });

  test("every broker and listing answers as before, and the lead count is the same", async () => {
    const client = {
      ...partner,
      get: (path: string) =>
        fetch(api.baseUrl + path, { headers: { authorization: `Bearer ${partner.apiKey}` } }).then((r) => r.json()),
    };
    expect(await Promise.all(brokerIds.map((id) => client.get(`/partner/v1/brokers/${id}`)))).toEqual(before.brokers);
    expect(await Promise.all(listingIds.map((id) => client.get(`/partner/v1/listings/${id}`)))).toEqual(
      before.listings,
    );
    expect(await client.get(`/partner/v1/offices/${partner.officeId}/leads/count`)).toEqual(before.leadCount);
  });

  test("the webhook endpoint is back and its secret, read with the restored key, still signs verifiable deliveries", async () => {
    const res = await fetch(`${api.baseUrl}/partner/v1/webhook-endpoints/drill-crm`, {
      headers: { authorization: `Bearer ${partner.apiKey}` },
    });
    expect(await res.json()).toEqual(before.endpoint);
    const key = parseSecretKey(readFileSync(join(work, "restored-webhook-key"), "utf8"))!;
    expect(statSync(join(work, "restored-webhook-key")).mode & 0o777).toBe(0o600);
    const [row] = await api.sql`SELECT secret_encrypted FROM webhook_endpoints WHERE external_id = 'drill-crm'`;
    const secret = createSecretBox(key).decrypt(row!.secret_encrypted);
    expect(secret).toBe(webhookSecret);
    const body = JSON.stringify({ type: "listing.published", data: { id: 1 } });
    const headers = signedHeaders([secret], "msg_drill", Math.floor(Date.now() / 1000), body);
    expect(verifyWebhook(webhookSecret, { ...headers }, body).id).toBe("msg_drill");
  });

  test("every photo variant is back byte for byte and served again", async () => {
    expect(await storedNames()).toEqual(photos.map((p) => p.name).sort());
    for (const p of photos) {
      const res = await fetch(`${api.baseUrl}/media/${p.name}`);
      expect(res.status).toBe(200);
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(new Uint8Array(p.bytes));
    }
  });

  test("after admin reindex, search finds every restored listing", async () => {
    const reindexed = json(await admin(["reindex"], cliEnv(RESTORED)), "admin reindex");
    expect(reindexed.documents).toBe(listingIds.length);
    await fetch(`${urls.OPENSEARCH_URL}/${alias}/_refresh`, { method: "POST" });
    const found = (await (await fetch(`${urls.OPENSEARCH_URL}/${alias}/_search?size=100`)).json()) as {
      hits: { hits: { _id: string }[] };
    };
    expect(found.hits.hits.map((h) => h._id).sort()).toEqual(
      before.listings.map((l) => String(l.listing.serviceListingId)).sort(),
    );
  });
});

/** Writes a manifest and seals it with this run's BACKUP_SIGNING_KEY, as `admin backup` would. */
function writeSealedManifest(dir: string, manifest: unknown) {
  const bytes = Buffer.from(JSON.stringify(manifest));
  writeFileSync(join(dir, "manifest.json"), bytes);
  writeFileSync(join(dir, "manifest.sig"), signManifest(bytes, signingKey));
}

/** SPARE as a new, empty database, and whether a restore left it so (no schema). */
async function freshSpare() {
  await dropDatabase(SPARE);
  await createDatabase(SPARE, false);
}
async function spareUntouched(): Promise<boolean> {
  const spare = postgres(dbUrl(SPARE), { max: 1, onnotice: () => {} });
  const [row] = await spare`SELECT to_regclass('partners') IS NULL AS untouched`;
  await spare.end();
  return row!.untouched as boolean;
}

describe("backups nobody can forge (issue 37, item 7)", () => {
  test("the backup directory is its owner's alone (0700), even where it existed, empty, open to everyone", () => {
    expect(statSync(backupDir).mode & 0o777).toBe(0o700);
    expect(statSync(plainDir).mode & 0o777).toBe(0o700);
    for (const name of readdirSync(backupDir).filter((n) => statSync(join(backupDir, n)).isFile()))
      expect([name, statSync(join(backupDir, name)).mode & 0o777]).toEqual([name, 0o600]);
  });

  test("by default no webhook key and no secret the API makes again (statistics day keys, preview-link secret) is in the backup", () => {
    expect(plain.webhookKey).toBeNull();
    expect(readdirSync(plainDir).filter((n) => n.startsWith("webhook"))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(plainDir, "manifest.json"), "utf8"));
    expect(manifest.webhookKey).toBeNull();
    const tables = manifest.database.tables.map((t: { name: string }) => t.name);
    expect(tables).toContain("api_keys");
    for (const secret of ["listing_stats_day_keys", "preview_link_secret"]) expect(tables).not.toContain(secret);
    expect(readdirSync(join(plainDir, "database")).filter((f) => /day_keys|preview/.test(f))).toEqual([]);
  });

  test("--with-webhook-key seals the key with the passphrase: the file holds it in no readable form, and a wrong passphrase writes nothing", async () => {
    const key = parseSecretKey(readFileSync(join(work, "restored-webhook-key"), "utf8"))!;
    const sealed = readFileSync(join(backupDir, "webhook-secret-key.enc"), "utf8");
    for (const form of [key.toString("base64"), key.toString("base64url"), key.toString("hex")])
      expect(sealed).not.toContain(form.slice(0, 16));
    await freshSpare();
    const to = join(work, "wrong-passphrase-key");
    const wrong = await admin(
      ["restore", "--from", backupDir, "--webhook-key-to", to],
      cliEnv(SPARE),
      "not the passphrase at all\n",
    );
    expect([wrong.code, wrong.stderr.trim()]).toEqual([
      1,
      "admin: the passphrase does not open webhook-secret-key.enc (or the file is damaged): no key was written",
    ]);
    expect(existsSync(to)).toBe(false);
    expect(await spareUntouched()).toBe(true);
    // A backup refuses a passphrase too short to hold anything, and writes no backup.
    const short = await admin(["backup", "--to", join(work, "short"), "--with-webhook-key"], cliEnv(RESTORED), "abc\n");
    expect([short.code, short.stderr.trim()]).toEqual([
      1,
      "admin: --with-webhook-key reads the passphrase for the webhook key from standard input: at least 16 characters, got 3",
    ]);
    expect(existsSync(join(work, "short", "manifest.json"))).toBe(false);
    // The old flag says what replaced it.
    const old = await admin(["backup", "--to", join(work, "old"), "--without-webhook-key"], cliEnv(RESTORED));
    expect(old.code).toBe(2);
    expect(old.stderr).toContain("the webhook key is left out unless --with-webhook-key asks for it");
  });

  test("a forged backup is refused before anything changes: an api_keys row added and its sum and count fixed in the manifest", async () => {
    const forged = join(work, "forged");
    cpSync(plainDir, forged, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(forged, "manifest.json"), "utf8"));
    const table = manifest.database.tables.find((t: { name: string }) => t.name === "api_keys");
    const file = join(forged, table.file);
    const rows = gunzipSync(readFileSync(file)).toString("utf8");
    // A working key of the attacker's own for the drill's partner: a copy of the partner's row, new id and hash.
    const stolen = generateApiKey();
    const fields = rows.split("\n")[0]!.split("\t");
    const at = (column: string) => table.columns.indexOf(column);
    fields[at("id")] = "987654";
    fields[at("key_hash")] = `\\\\x${hashApiKey(stolen).toString("hex")}`;
    fields[at("key_prefix")] = keyPrefix(stolen);
    const gz = gzipSync(Buffer.from(`${rows}${fields.join("\t")}\n`));
    writeFileSync(file, gz);
    table.rows += 1;
    table.bytes = gz.length;
    table.sha256 = createHash("sha256").update(gz).digest("hex");
    writeFileSync(join(forged, "manifest.json"), JSON.stringify(manifest, null, 2));
    await freshSpare();
    const r = await admin(["restore", "--from", forged], cliEnv(SPARE));
    expect([r.code, r.stdout, r.stderr.trim()]).toEqual([
      1,
      "",
      "admin: manifest.json does not match its signature: the backup was changed after it was made; it is refused",
    ]);
    expect(await spareUntouched()).toBe(true);
    // Without its seal, or sealed with another key: refused too.
    rmSync(join(forged, "manifest.sig"));
    const unsealed = await admin(["restore", "--from", forged], cliEnv(SPARE));
    expect([unsealed.code, unsealed.stderr.trim()]).toEqual([
      1,
      "admin: manifest.sig is missing: the backup is not signed (made by an earlier build, or the seal was removed), so nothing vouches for its contents; it is refused",
    ]);
    const other = randomBytes(32);
    writeFileSync(join(forged, "manifest.sig"), signManifest(readFileSync(join(forged, "manifest.json")), other));
    const otherKey = await admin(["restore", "--from", forged], cliEnv(SPARE));
    expect(otherKey.code).toBe(1);
    expect(otherKey.stderr.trim()).toMatch(
      /^admin: the backup is signed with key [0-9a-f]{8}, BACKUP_SIGNING_KEY is key [0-9a-f]{8}: restore with the signing key the backup was made with$/,
    );
    expect(await spareUntouched()).toBe(true);
  });

  test("restore needs the signing key: without BACKUP_SIGNING_KEY it refuses to start", async () => {
    const r = await admin(["restore", "--from", plainDir], cliEnv(SPARE, { BACKUP_SIGNING_KEY: undefined }));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("BACKUP_SIGNING_KEY or BACKUP_SIGNING_KEY_FILE is required to make or restore a backup");
    expect(await spareUntouched()).toBe(true);
  });

  test("the default backup restores in full but for the secrets left out, which the restored API makes anew", async () => {
    await freshSpare();
    const noKey = await admin(["restore", "--from", plainDir, "--webhook-key-to", join(work, "no-key")], cliEnv(SPARE));
    expect([noKey.code, noKey.stderr.trim()]).toEqual([
      1,
      "admin: the backup holds no webhook secret key (it is left out unless the backup was made with --with-webhook-key)",
    ]);
    expect(await spareUntouched()).toBe(true);
    const restored = json(await admin(["restore", "--from", plainDir], cliEnv(SPARE)), "admin restore (default)");
    expect(restored.webhookKey).toBeNull();
    expect(restored.next.join("\n")).toContain("not in this backup");
    const spare = postgres(dbUrl(SPARE), { max: 1, onnotice: () => {} });
    const digests = await tableDigests(spare);
    const [secrets] = await spare`
      SELECT (SELECT count(*)::int FROM listing_stats_day_keys) AS day_keys, (SELECT count(*)::int FROM preview_link_secret) AS preview`;
    await spare.end();
    expect(digests).toEqual(before.tables);
    expect(secrets).toEqual({ day_keys: 0, preview: 0 });
  });
});

describe("what restore refuses", () => {
  test("a database that already holds data: nothing is changed", async () => {
    const held = await tableDigests(api.sql);
    const r = await admin(["restore", "--from", backupDir], cliEnv(RESTORED));
    expect([r.code, r.stdout]).toEqual([1, ""]);
    expect(r.stderr.trim()).toMatch(
      /^admin: the target database is not empty \(.+ hold rows\): restore only into a new, empty database$/,
    );
    expect(await tableDigests(api.sql)).toEqual(held);
  });

  test("a damaged file, named, before the target database is touched", async () => {
    const damaged = join(work, "damaged");
    cpSync(backupDir, damaged, { recursive: true });
    const file = join(damaged, "database", "listings.copy.gz");
    const bytes = readFileSync(file);
    const middle = bytes.length >> 1;
    bytes[middle] = bytes[middle]! ^ 0xff;
    writeFileSync(file, bytes);
    await freshSpare();
    const r = await admin(["restore", "--from", damaged], cliEnv(SPARE));
    expect([r.code, r.stdout]).toEqual([1, ""]);
    expect(r.stderr.trim()).toBe(
      "admin: backup file database/listings.copy.gz is damaged: its SHA-256 is not the one in manifest.json",
    );
    expect(await spareUntouched()).toBe(true);
  });

  test("a damaged photo variant, named by its file in the backup", async () => {
    const damaged = join(work, "damaged-object");
    cpSync(backupDir, damaged, { recursive: true });
    const victim = photos[0]!.name;
    writeFileSync(join(damaged, "objects", mediaRelativePath(victim)), "not the bytes");
    await storage.delete(victim);
    await freshSpare();
    const r = await admin(["restore", "--from", damaged], cliEnv(SPARE));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`objects/${mediaRelativePath(victim)}: content does not match its name (damaged file)`);
    expect(r.stderr).toContain("the database was not changed");
    await storage.put(victim, photos[0]!.bytes, "image/webp");
  });

  test("a backup made by a newer release (a migration this one does not have), a manifest naming a file outside the backup, and a directory that is no backup", async () => {
    // Manifests sealed with the operators' key: these checks hold even for a backup the seal vouches for.
    const newer = join(work, "newer");
    cpSync(backupDir, newer, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(newer, "manifest.json"), "utf8"));
    manifest.database.migrations.push({ version: "9999", name: "from_the_future", checksum: "0" });
    writeSealedManifest(newer, manifest);
    await freshSpare();
    const r = await admin(["restore", "--from", newer], cliEnv(SPARE));
    expect([r.code, r.stderr.trim()]).toEqual([
      1,
      "admin: the backup was made by a newer release: this one does not have migration 9999_from_the_future; restore with that release (or a later one)",
    ]);
    manifest.database.migrations.pop();
    manifest.database.tables[0].file = "../../../etc/passwd";
    writeSealedManifest(newer, manifest);
    const outside = await admin(["restore", "--from", newer], cliEnv(SPARE));
    expect([outside.code, outside.stderr.trim()]).toEqual([
      1,
      "admin: backup file manifest.json is damaged: it names '../../../etc/passwd', not a file of a backup",
    ]);
    const none = await admin(["restore", "--from", join(work, "nothing-here")], cliEnv(SPARE));
    expect([none.code, none.stderr.trim()]).toEqual([
      1,
      `admin: no backup at ${join(work, "nothing-here")}: the directory does not exist`,
    ]);
    expect(existsSync(join(work, "nothing-here"))).toBe(false);
  });
});

describe("backups in the object store (the chart's backup CronJob and restore Job)", () => {
  const location = `s3://${s3.S3_BUCKET}/${uniqueName("backup-drill-remote")}/first`;
  const prefix = location.slice(`s3://${s3.S3_BUCKET}/`.length);
  const client = new Bun.S3Client({
    endpoint: s3.S3_ENDPOINT,
    bucket: s3.S3_BUCKET,
    region: s3.S3_REGION,
    accessKeyId: s3.S3_ACCESS_KEY_ID,
    secretAccessKey: s3.S3_SECRET_ACCESS_KEY,
  });
  const remoteKeys = async () =>
    ((await client.list({ prefix: `${prefix}/`, maxKeys: 1000 })).contents ?? []).map((o) => o.key).sort();
  const REMOTE = `${base}_remote`;

  afterAll(async () => {
    for (const key of await remoteKeys()) await client.delete(key);
    await dropDatabase(REMOTE).catch(() => {});
  });

  test("backup --to s3://… uploads the same files, manifest last; restore --from s3://… brings back every row and variant; a used name and a location without a manifest are refused", async () => {
    const source = await tableDigests(api.sql);
    const made = json(await admin(["backup", "--to", location], cliEnv(RESTORED)), "admin backup to the object store");
    expect(made.backup).toBe(location);
    expect(made.objects).toBe(photos.length);
    const keys = await remoteKeys();
    expect(keys).toContain(`${prefix}/manifest.json`);
    expect(keys).toContain(`${prefix}/database/listings.copy.gz`);
    for (const p of photos) expect(keys).toContain(`${prefix}/objects/${mediaRelativePath(p.name)}`);
    // The scratch copy is gone: only the object store holds the backup.
    const again = await admin(["backup", "--to", location], cliEnv(RESTORED));
    expect([again.code, again.stderr.trim()]).toEqual([
      1,
      `admin: ${location} already holds files: give a new name for each backup`,
    ]);

    await createDatabase(REMOTE, false);
    const remotePrefix = `${uniqueName("backup-drill-remote-media")}/`;
    const restored = json(
      await admin(["restore", "--from", location], cliEnv(REMOTE, { S3_PREFIX: remotePrefix })),
      "admin restore from the object store",
    );
    expect(restored.restoredFrom).toBe(location);
    const sql = postgres(dbUrl(REMOTE), { max: 1, onnotice: () => {} });
    try {
      expect(await tableDigests(sql)).toEqual(source);
    } finally {
      await sql.end();
    }
    const target = createS3MediaStorage({ ...store, prefix: remotePrefix });
    for (const p of photos) {
      const object = await target.read(p.name);
      expect(new Uint8Array(await new Response(object!.body).arrayBuffer())).toEqual(new Uint8Array(p.bytes));
      await target.delete(p.name);
    }

    const missing = `s3://${s3.S3_BUCKET}/${uniqueName("backup-drill-none")}/nothing`;
    const none = await admin(["restore", "--from", missing], cliEnv(SPARE));
    expect([none.code, none.stderr.trim()]).toEqual([
      1,
      `admin: ${missing} has no manifest.json: not a backup, or an interrupted one (a backup uploads its manifest last)`,
    ]);
  });
});
