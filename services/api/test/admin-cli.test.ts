// The admin CLI end to end: run as a subprocess (as operators do) against the real PostgreSQL and Redis.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { resolve } from "node:path";
import Redis from "ioredis";
import postgres from "postgres";
import { Topics } from "@pss/contracts";
import { silentLogger } from "@pss/service-kit";
import { main } from "../../admin/src/cli.ts";
import { createAuthenticator } from "@pss/http-kit";
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

async function cli(
  args: string[],
  envOverrides: Record<string, string | undefined> = {},
  stdin?: string,
): Promise<CliResult> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...envOverrides })) if (v !== undefined) env[k] = v;
  const proc = Bun.spawn([process.execPath, "services/admin/src/cli.ts", ...args], {
    cwd: ROOT,
    env,
    stdin: stdin === undefined ? "ignore" : Buffer.from(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/** Success means exit 0 and stdout holding exactly one JSON object on one line. */
async function ok(
  args: string[],
  envOverrides?: Record<string, string | undefined>,
  stdin?: string,
): Promise<Record<string, any> & { stderr: string }> {
  const r = await cli(args, envOverrides, stdin);
  if (r.code !== 0) throw new Error(`admin ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  expect(r.stdout.endsWith("\n")).toBe(true);
  expect(r.stdout.trimEnd()).not.toContain("\n");
  const parsed = JSON.parse(r.stdout) as unknown;
  expect(typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)).toBe(true);
  return { ...(parsed as Record<string, unknown>), stderr: r.stderr };
}

/** Failure means the given exit code, nothing on stdout, and one line for the human on stderr. */
async function fails(
  args: string[],
  code: number,
  message: RegExp,
  envOverrides?: Record<string, string | undefined>,
  stdin?: string,
) {
  const r = await cli(args, envOverrides, stdin);
  expect(r.code).toBe(code);
  expect(r.stdout).toBe("");
  expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(r.stderr).toMatch(message);
}

async function until<T>(check: () => Promise<T | null | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
}

const sha256 = (s: string) => createHash("sha256").update(s).digest();

async function keyRow(apiKey: string) {
  const [row] = await sql<
    { id?: string; partner_id: string; key_prefix: string; lead_tracking: boolean; revoked_at: Date | null }[]
  >`
    SELECT id::text AS id, partner_id, key_prefix, lead_tracking, revoked_at FROM api_keys WHERE key_hash = ${sha256(apiKey)}`;
  return row;
}

async function insertBroker(partnerId: string, externalId: string, officeId: number, mode: "live" | "test" = "live") {
  await sql`
    INSERT INTO brokers (partner_id, mode, external_id, office_id, name, email, content_hash)
    VALUES (${partnerId}, ${mode}, ${externalId}, ${officeId}, 'Test Broker', 'broker@example.com', '\\x00'::bytea)`;
}

describe("admin CLI: partners create", () => {
  test("creates partner, organization, default office and a hashed key in one go", async () => {
    const name = uniqueName("Acme Brokers");
    const out = await ok(["partners", "create", "--name", name, "--lead-tracking"]);
    expect(
      Object.keys(out)
        .filter((k) => k !== "stderr")
        .sort(),
    ).toEqual(["apiKey", "keyId", "officeId", "organizationId", "partnerId"]);
    expect(out.partnerId).toMatch(UUID);
    expect(out.apiKey).toMatch(/^pss_live_[A-Za-z0-9_-]{43}$/);
    expect(Number.isInteger(out.organizationId)).toBe(true);
    expect(Number.isInteger(out.officeId)).toBe(true);

    const [partner] = await sql`SELECT name FROM partners WHERE id = ${out.partnerId as string}`;
    expect(partner?.name).toBe(name);
    const [org] = await sql`SELECT partner_id, name FROM organizations WHERE id = ${out.organizationId as number}`;
    expect(org).toEqual({ partner_id: out.partnerId, name });
    const offices =
      await sql`SELECT id, name, is_default FROM offices WHERE organization_id = ${out.organizationId as number}`;
    expect(offices).toHaveLength(1);
    expect(offices[0]).toMatchObject({ id: out.officeId, is_default: true });
    expect(offices[0]!.name).toContain(name);

    const key = await keyRow(out.apiKey as string);
    expect(key?.id).toBe(out.keyId);
    delete key?.id;
    expect(key).toEqual({
      partner_id: out.partnerId as string,
      key_prefix: (out.apiKey as string).slice(0, 15),
      lead_tracking: true,
      revoked_at: null,
    });
    // The secret itself is never stored.
    const [stored] = await sql`SELECT count(*)::int AS n FROM api_keys WHERE key_prefix = ${out.apiKey as string}`;
    expect(stored!.n).toBe(0);
  });

  test("without --lead-tracking the key does not track leads", async () => {
    const out = await ok(["partners", "create", "--name", uniqueName("Plain Partner")]);
    expect((await keyRow(out.apiKey as string))?.lead_tracking).toBe(false);
  });

  test("with --test a test key (pss_test_) is printed beside the live one, with the same lead tracking", async () => {
    const out = await ok(["partners", "create", "--name", uniqueName("Sandbox Partner"), "--test", "--lead-tracking"]);
    expect(
      Object.keys(out)
        .filter((k) => k !== "stderr")
        .sort(),
    ).toEqual(["apiKey", "keyId", "officeId", "organizationId", "partnerId", "testApiKey", "testKeyId"]);
    expect(out.apiKey).toMatch(/^pss_live_[A-Za-z0-9_-]{43}$/);
    expect(out.testApiKey).toMatch(/^pss_test_[A-Za-z0-9_-]{43}$/);
    expect(await keyRow(out.testApiKey as string)).toMatchObject({
      id: out.testKeyId,
      partner_id: out.partnerId,
      lead_tracking: true,
      revoked_at: null,
    });
    const [row] = await sql`SELECT mode FROM api_keys WHERE id = ${out.testKeyId as string}`;
    expect(row!.mode).toBe("test");
    // The test key authenticates as the same partner, in test mode.
    const principal = await createAuthenticator({
      sql,
      redis,
      logger: silentLogger,
      localTtlMs: 0,
      recordLastUse: false,
    }).authenticate(out.testApiKey as string);
    expect(principal).toMatchObject({
      partnerId: out.partnerId,
      keyId: out.testKeyId,
      mode: "test",
      leadTracking: true,
    });
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
    expect(
      Object.keys(out)
        .filter((k) => k !== "stderr")
        .sort(),
    ).toEqual(["apiKey", "keyId"]);
    expect(out.apiKey).not.toBe(firstKey);
    expect(await keyRow(out.apiKey as string)).toMatchObject({
      id: out.keyId,
      partner_id: partnerId,
      lead_tracking: true,
      revoked_at: null,
    });
    const [count] = await sql`SELECT count(*)::int AS n FROM api_keys WHERE partner_id = ${partnerId}`;
    expect(count!.n).toBe(2);
  });

  test("keys create --test adds a test key; keys list shows its mode", async () => {
    const out = await ok(["keys", "create", "--partner", partnerId, "--test"]);
    expect(out.apiKey).toMatch(/^pss_test_[A-Za-z0-9_-]{43}$/);
    const { keys } = JSON.parse((await cli(["keys", "list", "--partner", partnerId])).stdout) as {
      keys: Record<string, unknown>[];
    };
    expect(keys.find((k) => k.keyId === out.keyId)).toMatchObject({
      mode: "test",
      prefix: (out.apiKey as string).slice(0, 15),
    });
  });

  test("keys list shows id, prefix, mode, created, last used, lead tracking and revocation, never the key", async () => {
    const created = await ok(["keys", "create", "--partner", partnerId]);
    const r = await cli(["keys", "list", "--partner", partnerId]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain(firstKey);
    expect(r.stdout).not.toContain(created.apiKey);
    const { keys } = JSON.parse(r.stdout) as { keys: Record<string, unknown>[] };
    const row = keys.find((k) => k.keyId === created.keyId)!;
    expect(row).toEqual({
      keyId: created.keyId,
      partnerId,
      prefix: (created.apiKey as string).slice(0, 15),
      mode: "live",
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      lastUsedAt: null,
      leadTracking: false,
      revoked: false,
      revokedAt: null,
    });
    expect(keys.every((k) => k.partnerId === partnerId)).toBe(true);
    // Oldest first, by id (not as text: "10" after "9").
    const ids = keys.map((k) => Number(k.keyId));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  test("keys revoke --key-id sets revoked_at, clears the auth cache entry and is idempotent", async () => {
    const { apiKey, keyId } = await ok(["keys", "create", "--partner", partnerId]);
    const cacheKey = `pss:auth:${sha256(apiKey as string).toString("hex")}`;
    await redis.set(cacheKey, "cached-auth", "EX", 60);

    expect(await ok(["keys", "revoke", "--key-id", keyId])).toEqual({ revoked: true, keyId, stderr: "" });
    const revokedAt = (await keyRow(apiKey as string))?.revoked_at;
    expect(revokedAt).toBeInstanceOf(Date);
    expect(await redis.exists(cacheKey)).toBe(0);
    // Other keys of the partner are untouched.
    expect((await keyRow(firstKey))?.revoked_at).toBeNull();

    const again = await ok(["keys", "revoke", "--key-id", keyId, "--partner", partnerId]);
    expect(again).toEqual({ revoked: true, keyId, stderr: "" });
    expect((await keyRow(apiKey as string))?.revoked_at).toEqual(revokedAt!);
    const { keys } = await ok(["keys", "list", "--partner", partnerId]);
    expect(keys.find((k: any) => k.keyId === keyId)).toMatchObject({
      revoked: true,
      revokedAt: revokedAt!.toISOString(),
    });
  });

  test("keys revoke --key-stdin revokes a key known only by its value, read from standard input", async () => {
    const { apiKey, keyId } = await ok(["keys", "create", "--partner", partnerId]);
    expect(await ok(["keys", "revoke", "--key-stdin"], undefined, `${apiKey}\n`)).toEqual({
      revoked: true,
      keyId,
      stderr: "",
    });
    expect((await keyRow(apiKey as string))?.revoked_at).toBeInstanceOf(Date);
    await fails(["keys", "revoke", "--key-stdin"], 2, /no key on standard input/, undefined, "");
  });

  test("the plaintext key on the command line is refused", async () => {
    const { apiKey } = await ok(["keys", "create", "--partner", partnerId]);
    await fails(
      ["keys", "revoke", "--partner", partnerId, "--key", apiKey as string],
      2,
      /--key is not accepted: .*--key-id/,
    );
    expect((await keyRow(apiKey as string))?.revoked_at).toBeNull();
    await fails(["keys", "revoke", "--partner", partnerId], 2, /exactly one of --key-id, --key-stdin/);
  });

  test("keys revoke still revokes when Redis is unreachable, and warns about the cache TTL", async () => {
    const { apiKey, keyId } = await ok(["keys", "create", "--partner", partnerId]);
    const out = await ok(["keys", "revoke", "--key-id", keyId], { REDIS_URL: "redis://127.0.0.1:1" });
    expect(out).toMatchObject({ revoked: true });
    expect(out.stderr).toMatch(/warning: .*Redis.*60 s/);
    expect((await keyRow(apiKey as string))?.revoked_at).toBeInstanceOf(Date);
  });

  test("a key of another partner, or one never issued, is not found", async () => {
    const other = await ok(["partners", "create", "--name", uniqueName("Other Partner")]);
    await fails(
      ["keys", "revoke", "--partner", partnerId, "--key-id", other.keyId],
      1,
      /key not found for this partner/,
    );
    await fails(
      ["keys", "revoke", "--partner", partnerId, "--key-stdin"],
      1,
      /key not found for this partner/,
      undefined,
      other.apiKey,
    );
    await fails(["keys", "revoke", "--key-stdin"], 1, /key not found/, undefined, "pss_live_nope");
    await fails(["keys", "revoke", "--key-id", "999999999999"], 1, /key not found/);
    expect((await keyRow(other.apiKey as string))?.revoked_at).toBeNull();
  });
});

describe("admin CLI: key last use", () => {
  test("the authenticator records a key's last use, at most once per interval, and keys list shows it", async () => {
    const p = await ok(["partners", "create", "--name", uniqueName("Used Partner")]);
    const auth = createAuthenticator({ sql, redis, logger: silentLogger, localTtlMs: 0, lastUsedIntervalMs: 60_000 });
    const lastUsed = async () =>
      ((await ok(["keys", "list", "--partner", p.partnerId])).keys[0] as { lastUsedAt: string | null }).lastUsedAt;
    expect(await lastUsed()).toBeNull();

    expect((await auth.authenticate(p.apiKey))?.keyId).toBe(p.keyId);
    const first = await until(lastUsed);
    expect(Date.now() - Date.parse(first)).toBeLessThan(30_000);
    // Within the interval: no further write, whatever the traffic.
    for (let i = 0; i < 20; i++) await auth.authenticate(p.apiKey);
    await Bun.sleep(200);
    expect(await lastUsed()).toBe(first);
    // Another API instance does not rewrite a fresh value either (the UPDATE's own guard).
    await createAuthenticator({ sql, redis, logger: silentLogger, localTtlMs: 0 }).authenticate(p.apiKey);
    await Bun.sleep(200);
    expect(await lastUsed()).toBe(first);

    // Past the interval (here 50 ms), the next use moves it.
    const eager = createAuthenticator({ sql, redis, logger: silentLogger, localTtlMs: 0, lastUsedIntervalMs: 50 });
    await Bun.sleep(100);
    await eager.authenticate(p.apiKey);
    const later = await until(async () => {
      const v = await lastUsed();
      return v !== first ? v : null;
    });
    expect(Date.parse(later!)).toBeGreaterThan(Date.parse(first));
  });
});

describe("admin CLI: offices and broker assignment", () => {
  test("offices create adds a non-default office; brokers assign-office moves the broker", async () => {
    const p = await ok(["partners", "create", "--name", uniqueName("Office Partner")]);
    const partnerId = p.partnerId as string;
    const created = await ok(["offices", "create", "--organization", String(p.organizationId), "--name", "Downtown"]);
    expect(Number.isInteger(created.officeId)).toBe(true);
    const [office] =
      await sql`SELECT organization_id, name, is_default FROM offices WHERE id = ${created.officeId as number}`;
    expect(office).toEqual({ organization_id: p.organizationId, name: "Downtown", is_default: false });

    const externalId = uniqueName("broker");
    await insertBroker(partnerId, externalId, p.officeId as number);
    const [before] =
      await sql`SELECT updated_at FROM brokers WHERE partner_id = ${partnerId} AND external_id = ${externalId}`;
    const out = await ok([
      "brokers",
      "assign-office",
      "--partner",
      partnerId,
      "--external-broker-id",
      externalId,
      "--office",
      String(created.officeId),
    ]);
    expect(out).toEqual({ ok: true, stderr: "" });
    const [after] =
      await sql`SELECT office_id, version, updated_at FROM brokers WHERE partner_id = ${partnerId} AND external_id = ${externalId}`;
    expect(after!.office_id).toBe(created.officeId);
    expect(after!.version).toBe(1);
    expect((after!.updated_at as Date).getTime()).toBeGreaterThan((before!.updated_at as Date).getTime());
  });

  test("an office of another partner, an unknown office or an unknown broker is refused", async () => {
    const p = await ok(["partners", "create", "--name", uniqueName("Guarded Partner")]);
    const other = await ok(["partners", "create", "--name", uniqueName("Foreign Partner")]);
    const externalId = uniqueName("broker");
    await insertBroker(p.partnerId as string, externalId, p.officeId as number);
    const assign = (office: unknown, broker = externalId) => [
      "brokers",
      "assign-office",
      "--partner",
      p.partnerId as string,
      "--external-broker-id",
      broker,
      "--office",
      String(office),
    ];

    await fails(assign(other.officeId), 1, /office \d+ not found for this partner/);
    await fails(assign(2_000_000_000), 1, /office 2000000000 not found for this partner/);
    await fails(assign(p.officeId, "no-such-broker"), 1, /broker not found/);
    const [broker] =
      await sql`SELECT office_id FROM brokers WHERE partner_id = ${p.partnerId as string} AND external_id = ${externalId}`;
    expect(broker!.office_id).toBe(p.officeId);
  });

  test("with --test it moves the test-mode broker of that external ID, and only that one", async () => {
    const p = await ok(["partners", "create", "--name", uniqueName("Two Mode Partner")]);
    const office = await ok([
      "offices",
      "create",
      "--organization",
      String(p.organizationId),
      "--name",
      "Sandbox office",
    ]);
    const externalId = uniqueName("broker");
    await insertBroker(p.partnerId as string, externalId, p.officeId as number, "live");
    const assign = [
      "brokers",
      "assign-office",
      "--partner",
      p.partnerId as string,
      "--external-broker-id",
      externalId,
      "--office",
      String(office.officeId),
      "--test",
    ];
    await fails(assign, 1, /broker not found/);
    await insertBroker(p.partnerId as string, externalId, p.officeId as number, "test");
    expect(await ok(assign)).toEqual({ ok: true, stderr: "" });
    const rows =
      await sql`SELECT mode, office_id FROM brokers WHERE partner_id = ${p.partnerId as string} AND external_id = ${externalId} ORDER BY mode`;
    expect([...rows]).toEqual([
      { mode: "live", office_id: p.officeId },
      { mode: "test", office_id: office.officeId },
    ]);
  });
});

describe("admin CLI: portal users", () => {
  test("invite gives a person access (the portal e-mails the invitation), again changes lead access; list and remove", async () => {
    const p = await ok(["partners", "create", "--name", uniqueName("Portal Partner")]);
    const partnerId = p.partnerId as string;
    const email = `${uniqueName("staff")}@brokerage.example`;
    const invited = await ok([
      "portal-users",
      "invite",
      "--partner",
      partnerId,
      "--email",
      email.toUpperCase(),
      "--lead-access",
    ]);
    expect(invited).toMatchObject({
      partnerId,
      invited: true,
      portalUser: { email, leadAccess: true, invitation: "pending", lastSignInAt: null },
    });
    const again = await ok(["portal-users", "invite", "--partner", partnerId, "--email", email]);
    expect(again).toMatchObject({ invited: false, portalUser: { email, leadAccess: false } });
    const listed = await ok(["portal-users", "list", "--partner", partnerId]);
    expect(listed.portalUsers.map((u: { email: string }) => u.email)).toEqual([email]);
    expect(await ok(["portal-users", "remove", "--partner", partnerId, "--email", email])).toMatchObject({
      removed: email,
    });
    await fails(["portal-users", "remove", "--partner", partnerId, "--email", email], 1, /no portal user/);
  });

  test("names what is wrong: a partner that does not exist, an address that is not one", async () => {
    await fails(
      ["portal-users", "invite", "--partner", crypto.randomUUID(), "--email", "a@b.example"],
      1,
      /partner .* not found/,
    );
    const p = await ok(["partners", "create", "--name", uniqueName("Portal Partner")]);
    await fails(
      ["portal-users", "invite", "--partner", p.partnerId as string, "--email", "nobody"],
      2,
      /--email must be an e-mail address/,
    );
    await fails(
      ["portal-users", "invite", "--partner", "not-a-uuid", "--email", "a@b.example"],
      2,
      /--partner must be a UUID/,
    );
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
    await fails(
      ["offices", "create", "--organization", "abc", "--name", "x"],
      2,
      /--organization must be a positive integer/,
    );
  });

  test("unknown partner or organization exits 1", async () => {
    await fails(["keys", "create", "--partner", crypto.randomUUID()], 1, /partner .* not found/);
    await fails(
      ["offices", "create", "--organization", "2000000000", "--name", "x"],
      1,
      /organization 2000000000 not found/,
    );
  });

  test("bad configuration is reported clearly, without the URL's password", async () => {
    await fails(["partners", "create", "--name", "x"], 1, /invalid configuration: DATABASE_URL must be a URL/, {
      DATABASE_URL: "postgres://u:hunter2@[::1",
    });
    const r = await cli(["partners", "create", "--name", "x"], { DATABASE_URL: "postgres://u:hunter2@[::1" });
    expect(r.stderr).not.toContain("hunter2");
  });
});

describe("admin CLI: lists", () => {
  test("partners list and offices list show what partners create and offices create made", async () => {
    const name = uniqueName("Listed Partner");
    const p = await ok(["partners", "create", "--name", name]);
    const office = await ok(["offices", "create", "--organization", String(p.organizationId), "--name", "Uptown"]);
    const { partners } = await ok(["partners", "list", "--limit", "10000"]);
    expect(partners.find((x: any) => x.partnerId === p.partnerId)).toEqual({
      partnerId: p.partnerId,
      name,
      createdAt: expect.any(String),
      activeKeys: 1,
    });

    const externalId = uniqueName("broker");
    await insertBroker(p.partnerId, externalId, office.officeId);
    const { offices } = await ok(["offices", "list", "--partner", p.partnerId]);
    expect(offices).toEqual([
      {
        officeId: p.officeId,
        organizationId: p.organizationId,
        partnerId: p.partnerId,
        name: `${name} main office`,
        isDefault: true,
        brokers: 0,
        createdAt: expect.any(String),
      },
      {
        officeId: office.officeId,
        organizationId: p.organizationId,
        partnerId: p.partnerId,
        name: "Uptown",
        isDefault: false,
        brokers: 1,
        createdAt: expect.any(String),
      },
    ]);
    expect((await ok(["offices", "list", "--organization", String(p.organizationId)])).offices).toHaveLength(2);
    await fails(["keys", "list", "--partner", crypto.randomUUID()], 1, /partner .* not found/);
    await fails(["partners", "list", "--limit", "0"], 2, /--limit must be a positive integer/);
  });
});

describe("admin CLI: output", () => {
  /** The CLI's main in this process, as if stdout were (or were not) a terminal. */
  async function runMain(args: string[], stdoutIsTty: boolean): Promise<{ code: number; out: string }> {
    let out = "";
    const code = await main(args, {
      env: process.env,
      stdoutIsTty,
      write: async (t) => void (out += t),
      readStdin: async () => "",
    });
    return { code, out };
  }

  test("a terminal gets a table; --json (or a pipe) gets one JSON document", async () => {
    const p = await ok(["partners", "create", "--name", uniqueName("Tabled Partner")]);
    const table = await runMain(["keys", "list", "--partner", p.partnerId], true);
    expect(table.code).toBe(0);
    const lines = table.out.split("\n");
    expect(lines[0]).toBe("keys:");
    expect(lines[1]).toMatch(
      /^\s+keyId\s+partnerId\s+prefix\s+mode\s+createdAt\s+lastUsedAt\s+leadTracking\s+revoked\s+revokedAt$/,
    );
    expect(lines[3]).toContain(p.keyId);
    expect(lines[3]).toContain((p.apiKey as string).slice(0, 15));
    expect(table.out).not.toContain(p.apiKey);

    for (const [args, tty] of [
      [["keys", "list", "--partner", p.partnerId, "--json"], true],
      [["keys", "list", "--partner", p.partnerId], false],
    ] as const) {
      const json = await runMain([...args], tty);
      expect(json.out.endsWith("\n")).toBe(true);
      expect(json.out.trimEnd()).not.toContain("\n");
      expect(JSON.parse(json.out).keys[0].keyId).toBe(p.keyId);
    }
  });
});

describe("admin CLI: outbox", () => {
  test("outbox status shows backlog, oldest age and set-aside rows; outbox retry puts a set-aside row back in line", async () => {
    // A row as the relay sets aside one Kafka can never take. Once re-queued any running relay may publish it,
    // so it is an event every consumer ignores (a type nobody handles, of a listing that does not exist).
    const aggregateId = String(900_000_000_000 + Math.floor(Math.random() * 1e9));
    const envelope = {
      eventId: crypto.randomUUID(),
      type: "admin-test.noop",
      aggregateType: "listing",
      aggregateId,
      version: 4,
      partnerId: crypto.randomUUID(),
      occurredAt: new Date().toISOString(),
      payload: { listingId: Number(aggregateId) },
    };
    const [row] = await sql`
      INSERT INTO outbox (topic, message_key, payload, created_at, set_aside_at, set_aside_reason)
      VALUES (${Topics.listingEvents.name}, ${aggregateId}, ${sql.json(envelope)}, now() - interval '5 minutes', now(), 'MESSAGE_TOO_LARGE: test')
      RETURNING id::text AS id`;
    const topic = Topics.listingEvents.name;
    try {
      const status = await ok(["outbox", "status", "--limit", "10000"]);
      expect(status.pending).toBeGreaterThanOrEqual(0);
      expect(status.oldestPendingAgeMs).toBeGreaterThanOrEqual(0);
      expect(status.setAside).toBeGreaterThanOrEqual(1);
      expect(status.setAsideRows.find((r: any) => r.id === row!.id)).toMatchObject({
        topic,
        messageKey: aggregateId,
        eventType: "admin-test.noop",
        version: 4,
        reason: "MESSAGE_TOO_LARGE: test",
      });

      expect(await ok(["outbox", "retry", "--id", row!.id])).toEqual({ requeued: 1, ids: [row!.id], stderr: "" });
      const [after] = await sql`SELECT set_aside_at, set_aside_reason FROM outbox WHERE id = ${row!.id}`;
      expect(after).toEqual({ set_aside_at: null, set_aside_reason: null });
      // Back in line: no longer listed as set aside, published by the next relay round.
      const again = await ok(["outbox", "status", "--limit", "10000"]);
      expect(again.setAsideRows.find((r: any) => r.id === row!.id)).toBeUndefined();
      await fails(["outbox", "retry", "--id", row!.id], 1, /outbox row \d+ is not set aside/);
      await fails(["outbox", "retry"], 2, /exactly one of --id, --all/);
    } finally {
      await sql`DELETE FROM outbox WHERE id = ${row!.id}`;
    }
  });
});
