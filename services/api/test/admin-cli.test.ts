// The admin CLI end to end: run as a subprocess (as operators do) against the real PostgreSQL and Redis.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { resolve } from "node:path";
import Redis from "ioredis";
import postgres from "postgres";
import { testUrls, uniqueName } from "../../../test/support/env.ts";

const ROOT = resolve(import.meta.dir, "../../..");
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const urls = testUrls();
const sql = postgres(urls.DATABASE_URL, { max: 2, onnotice: () => {} });
const redis = new Redis(urls.REDIS_URL);
afterAll(async () => {
  await sql.end();
  redis.disconnect();
});

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(args: string[], envOverrides: Record<string, string | undefined> = {}): Promise<CliResult> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...envOverrides })) if (v !== undefined) env[k] = v;
  const proc = Bun.spawn([process.execPath, "services/api/src/admin/cli.ts", ...args], { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** Success means exit 0 and stdout holding exactly one JSON object on one line. */
async function ok(args: string[], envOverrides?: Record<string, string | undefined>): Promise<Record<string, unknown> & { stderr: string }> {
  const r = await cli(args, envOverrides);
  if (r.code !== 0) throw new Error(`admin ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  expect(r.stdout.endsWith("\n")).toBe(true);
  expect(r.stdout.trimEnd()).not.toContain("\n");
  const parsed = JSON.parse(r.stdout) as unknown;
  expect(typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)).toBe(true);
  return { ...(parsed as Record<string, unknown>), stderr: r.stderr };
}

/** Failure means the given exit code, nothing on stdout, and one line for the human on stderr. */
async function fails(args: string[], code: number, message: RegExp, envOverrides?: Record<string, string | undefined>) {
  const r = await cli(args, envOverrides);
  expect(r.code).toBe(code);
  expect(r.stdout).toBe("");
  expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(r.stderr).toMatch(message);
}

const sha256 = (s: string) => createHash("sha256").update(s).digest();

async function keyRow(apiKey: string) {
  const [row] = await sql<{ partner_id: string; key_prefix: string; lead_tracking: boolean; revoked_at: Date | null }[]>`
    SELECT partner_id, key_prefix, lead_tracking, revoked_at FROM api_keys WHERE key_hash = ${sha256(apiKey)}`;
  return row;
}

async function insertBroker(partnerId: string, externalId: string, officeId: number) {
  await sql`
    INSERT INTO brokers (partner_id, external_id, office_id, name, email, content_hash)
    VALUES (${partnerId}, ${externalId}, ${officeId}, 'Test Broker', 'broker@example.com', '\\x00'::bytea)`;
}

describe("admin CLI: partners create", () => {
  test("creates partner, organization, default office and a hashed key in one go", async () => {
    const name = uniqueName("Acme Brokers");
    const out = await ok(["partners", "create", "--name", name, "--lead-tracking"]);
    expect(Object.keys(out).filter((k) => k !== "stderr").sort()).toEqual(["apiKey", "officeId", "organizationId", "partnerId"]);
    expect(out.partnerId).toMatch(UUID);
    expect(out.apiKey).toMatch(/^pss_live_[A-Za-z0-9_-]{43}$/);
    expect(Number.isInteger(out.organizationId)).toBe(true);
    expect(Number.isInteger(out.officeId)).toBe(true);

    const [partner] = await sql`SELECT name FROM partners WHERE id = ${out.partnerId as string}`;
    expect(partner?.name).toBe(name);
    const [org] = await sql`SELECT partner_id, name FROM organizations WHERE id = ${out.organizationId as number}`;
    expect(org).toEqual({ partner_id: out.partnerId, name });
    const offices = await sql`SELECT id, name, is_default FROM offices WHERE organization_id = ${out.organizationId as number}`;
    expect(offices).toHaveLength(1);
    expect(offices[0]).toMatchObject({ id: out.officeId, is_default: true });
    expect(offices[0]!.name).toContain(name);

    const key = await keyRow(out.apiKey as string);
    expect(key).toEqual({ partner_id: out.partnerId as string, key_prefix: (out.apiKey as string).slice(0, 15), lead_tracking: true, revoked_at: null });
    // The secret itself is never stored.
    const [stored] = await sql`SELECT count(*)::int AS n FROM api_keys WHERE key_prefix = ${out.apiKey as string}`;
    expect(stored!.n).toBe(0);
  });

  test("without --lead-tracking the key does not track leads", async () => {
    const out = await ok(["partners", "create", "--name", uniqueName("Plain Partner")]);
    expect((await keyRow(out.apiKey as string))?.lead_tracking).toBe(false);
  });
});

describe("admin CLI: keys", () => {
  let partnerId: string;
  let firstKey: string;
  beforeAll(async () => {
    const out = await ok(["partners", "create", "--name", uniqueName("Key Partner")]);
    partnerId = out.partnerId as string;
    firstKey = out.apiKey as string;
  });

  test("keys create adds a second key for the partner", async () => {
    const out = await ok(["keys", "create", "--partner", partnerId, "--lead-tracking"]);
    expect(Object.keys(out).filter((k) => k !== "stderr")).toEqual(["apiKey"]);
    expect(out.apiKey).not.toBe(firstKey);
    expect(await keyRow(out.apiKey as string)).toMatchObject({ partner_id: partnerId, lead_tracking: true, revoked_at: null });
    const [count] = await sql`SELECT count(*)::int AS n FROM api_keys WHERE partner_id = ${partnerId}`;
    expect(count!.n).toBe(2);
  });

  test("keys revoke sets revoked_at, clears the auth cache entry and is idempotent", async () => {
    const { apiKey } = await ok(["keys", "create", "--partner", partnerId]);
    const cacheKey = `pss:auth:${sha256(apiKey as string).toString("hex")}`;
    await redis.set(cacheKey, "cached-auth", "EX", 60);

    expect(await ok(["keys", "revoke", "--partner", partnerId, "--key", apiKey as string])).toMatchObject({ revoked: true });
    const revokedAt = (await keyRow(apiKey as string))?.revoked_at;
    expect(revokedAt).toBeInstanceOf(Date);
    expect(await redis.exists(cacheKey)).toBe(0);
    // Other keys of the partner are untouched.
    expect((await keyRow(firstKey))?.revoked_at).toBeNull();

    const again = await ok(["keys", "revoke", "--partner", partnerId, "--key", apiKey as string]);
    expect(again).toEqual({ revoked: true, stderr: "" });
    expect((await keyRow(apiKey as string))?.revoked_at).toEqual(revokedAt!);
  });

  test("keys revoke still revokes when Redis is unreachable, and warns about the cache TTL", async () => {
    const { apiKey } = await ok(["keys", "create", "--partner", partnerId]);
    const out = await ok(["keys", "revoke", "--partner", partnerId, "--key", apiKey as string], { REDIS_URL: "redis://127.0.0.1:1" });
    expect(out).toMatchObject({ revoked: true });
    expect(out.stderr).toMatch(/warning: .*Redis.*60 s/);
    expect((await keyRow(apiKey as string))?.revoked_at).toBeInstanceOf(Date);
  });

  test("a key of another partner, or one never issued, is not found", async () => {
    const other = await ok(["partners", "create", "--name", uniqueName("Other Partner")]);
    await fails(["keys", "revoke", "--partner", partnerId, "--key", other.apiKey as string], 1, /key not found for this partner/);
    await fails(["keys", "revoke", "--partner", partnerId, "--key", "pss_live_nope"], 1, /key not found for this partner/);
    expect((await keyRow(other.apiKey as string))?.revoked_at).toBeNull();
  });
});

describe("admin CLI: offices and broker assignment", () => {
  test("offices create adds a non-default office; brokers assign-office moves the broker", async () => {
    const p = await ok(["partners", "create", "--name", uniqueName("Office Partner")]);
    const partnerId = p.partnerId as string;
    const created = await ok(["offices", "create", "--organization", String(p.organizationId), "--name", "Downtown"]);
    expect(Number.isInteger(created.officeId)).toBe(true);
    const [office] = await sql`SELECT organization_id, name, is_default FROM offices WHERE id = ${created.officeId as number}`;
    expect(office).toEqual({ organization_id: p.organizationId, name: "Downtown", is_default: false });

    const externalId = uniqueName("broker");
    await insertBroker(partnerId, externalId, p.officeId as number);
    const [before] = await sql`SELECT updated_at FROM brokers WHERE partner_id = ${partnerId} AND external_id = ${externalId}`;
    const out = await ok(["brokers", "assign-office", "--partner", partnerId, "--external-broker-id", externalId, "--office", String(created.officeId)]);
    expect(out).toEqual({ ok: true, stderr: "" });
    const [after] = await sql`SELECT office_id, version, updated_at FROM brokers WHERE partner_id = ${partnerId} AND external_id = ${externalId}`;
    expect(after!.office_id).toBe(created.officeId);
    expect(after!.version).toBe(1);
    expect((after!.updated_at as Date).getTime()).toBeGreaterThan((before!.updated_at as Date).getTime());
  });

  test("an office of another partner, an unknown office or an unknown broker is refused", async () => {
    const p = await ok(["partners", "create", "--name", uniqueName("Guarded Partner")]);
    const other = await ok(["partners", "create", "--name", uniqueName("Foreign Partner")]);
    const externalId = uniqueName("broker");
    await insertBroker(p.partnerId as string, externalId, p.officeId as number);
    const assign = (office: unknown, broker = externalId) =>
      ["brokers", "assign-office", "--partner", p.partnerId as string, "--external-broker-id", broker, "--office", String(office)];

    await fails(assign(other.officeId), 1, /office \d+ not found for this partner/);
    await fails(assign(2_000_000_000), 1, /office 2000000000 not found for this partner/);
    await fails(assign(p.officeId, "no-such-broker"), 1, /broker not found/);
    const [broker] = await sql`SELECT office_id FROM brokers WHERE partner_id = ${p.partnerId as string} AND external_id = ${externalId}`;
    expect(broker!.office_id).toBe(p.officeId);
  });
});

describe("admin CLI: bad arguments", () => {
  test("usage errors exit 2 with one line on stderr and nothing on stdout", async () => {
    await fails(["partners", "create"], 2, /requires --name/);
    await fails(["partners", "create", "--name"], 2, /--name needs a value/);
    await fails(["partners", "create", "--name", "  "], 2, /must not be empty/);
    await fails([], 2, /missing command/);
    await fails(["partners", "delete", "--name", "x"], 2, /unknown command 'partners delete'/);
    await fails(["partners", "create", "--name", "x", "--colour", "red"], 2, /unknown flag '--colour'/);
    await fails(["partners", "create", "--name", "x", "--name", "y"], 2, /more than once/);
    await fails(["partners", "create", "--name", "x", "stray"], 2, /unexpected argument 'stray'/);
    await fails(["keys", "create", "--partner", "not-a-uuid"], 2, /partner id must be a UUID, got 'not-a-uuid'/);
    await fails(["offices", "create", "--organization", "abc", "--name", "x"], 2, /--organization must be a positive integer/);
  });

  test("unknown partner or organization exits 1", async () => {
    await fails(["keys", "create", "--partner", crypto.randomUUID()], 1, /partner .* not found/);
    await fails(["offices", "create", "--organization", "2000000000", "--name", "x"], 1, /organization 2000000000 not found/);
  });

  test("missing configuration is reported clearly", async () => {
    await fails(["partners", "create", "--name", "x"], 1, /DATABASE_URL is required/, { DATABASE_URL: undefined });
  });
});
