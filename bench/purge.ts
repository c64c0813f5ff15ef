// `bun bench/purge.ts` (or `npm run bench -- purge`): the test-data purge (DELETE /partner/v1/test-data and the
// retention job both run purgeTestData) with 1 million leads of other partners in the leads table, without and
// with the index on leads(broker_id) (migration 0018), in the same run on the same data.
//
// Each deleted broker makes PostgreSQL check leads' foreign key (`SELECT 1 FROM leads WHERE broker_id = $1 FOR
// KEY SHARE`), and the purge's NOT EXISTS asks the same: without the index, scans of the whole leads table. The
// 1 M live leads belong to a bench partner of their own, seeded once (INSERT … SELECT generate_series) and reused
// by later runs; each phase writes the same test records (brokers, a listing and a test lead each) for a second
// partner and times purgeTestData of that partner. The index is dropped for the first phase and built again
// (timed: what the migration costs at this size) for the second; it is always there again when the script ends.
// It works on DATABASE_URL's database: do not run it while tests use the same database. Prints one JSON line.
import postgres from "postgres";
import { migrate } from "@pss/database";
import { up, URL_VARIABLES, type InfraUrls } from "../infra/src/index.ts";
import { purgeTestData, type PurgeCounts } from "../services/api/src/test-mode/test-data-purge.ts";

const LEADS = 1_000_000;
/** Live brokers and listings the seeded leads refer to. */
const LIVE_RECORDS = 1_000;
/** Test brokers purged per phase (one test listing and one test lead each). */
const TEST_BROKERS = Number(process.env.BENCH_PURGE_BROKERS ?? 100);
const LEADS_PARTNER = `pss-bench-purge-leads-${LEADS}`;
const TEST_PARTNER = "pss-bench-purge-test-records";
/** The purge with the index must be at least this many times faster than without it. */
const TARGET_SPEEDUP = 10;

const say = (msg: string) => console.error(`purge: ${msg}`);
const env = process.env as Record<string, string | undefined>;
const urls: InfraUrls = URL_VARIABLES.every((v) => env[v])
  ? (Object.fromEntries(URL_VARIABLES.map((v) => [v, env[v]!])) as InfraUrls)
  : await up();
const sql = postgres(urls.DATABASE_URL, { max: 4, onnotice: () => {} });
await migrate(sql);

interface Org {
  partnerId: string;
  organizationId: number;
  officeId: number;
}

async function findOrg(tx: postgres.Sql | postgres.TransactionSql, name: string): Promise<Org | null> {
  const [row] = await tx<{ partner_id: string; organization_id: number; office_id: number }[]>`
    SELECT p.id AS partner_id, g.id AS organization_id, o.id AS office_id
    FROM partners p JOIN organizations g ON g.partner_id = p.id JOIN offices o ON o.organization_id = g.id
    WHERE p.name = ${name} ORDER BY o.id LIMIT 1`;
  return row ? { partnerId: row.partner_id, organizationId: row.organization_id, officeId: row.office_id } : null;
}

async function createOrg(tx: postgres.TransactionSql, name: string): Promise<Org> {
  const [partner] = await tx<{ id: string }[]>`INSERT INTO partners (name) VALUES (${name}) RETURNING id`;
  const [organization] = await tx<
    { id: number }[]
  >`INSERT INTO organizations (partner_id, name) VALUES (${partner!.id}, 'Bench Purge Inc.') RETURNING id`;
  const [office] = await tx<
    { id: number }[]
  >`INSERT INTO offices (organization_id, name, is_default) VALUES (${organization!.id}, 'Bench office', true) RETURNING id`;
  return { partnerId: partner!.id, organizationId: organization!.id, officeId: office!.id };
}

/** Brokers and one listing per broker, in one statement each; the listings' IDs and their brokers' IDs. */
async function insertRecords(
  tx: postgres.TransactionSql,
  org: Org,
  mode: "live" | "test",
  count: number,
  prefix: string,
): Promise<{ listingIds: string[]; brokerIds: string[] }> {
  const brokers = await tx<{ id: string }[]>`
    INSERT INTO brokers (partner_id, external_id, office_id, name, email, content_hash, mode)
    SELECT ${org.partnerId}, ${prefix} || '-b' || g, ${org.officeId}, 'Bench Broker ' || g, 'broker' || g || '@example.com', '\\x00', ${mode}
    FROM generate_series(1, ${count}) g ORDER BY g RETURNING id::text AS id`;
  const brokerIds = brokers.map((b) => b.id);
  const listings = await tx<{ id: string; broker_id: string }[]>`
    INSERT INTO listings (partner_id, external_id, broker_id, status, business_type, title, city, state, country, visibility, content_hash, mode)
    SELECT ${org.partnerId}, ${prefix} || '-l' || g, (${brokerIds}::bigint[])[g], 'FOR_SALE', 'Retail', 'Bench listing ' || g, 'Austin', 'TX', 'US', 'SHOW_CITY_STATE', '\\x00', ${mode}
    FROM generate_series(1, ${count}) g RETURNING id::text AS id, broker_id::text AS broker_id`;
  return { listingIds: listings.map((l) => l.id), brokerIds: listings.map((l) => l.broker_id) };
}

/** All or nothing in one transaction: the leads partner exists only once its leads are complete. */
async function seedLeads(): Promise<number | null> {
  if (await findOrg(sql, LEADS_PARTNER)) return null;
  const began = performance.now();
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(727102)`;
    if (await findOrg(tx, LEADS_PARTNER)) return;
    const org = await createOrg(tx, LEADS_PARTNER);
    const { listingIds, brokerIds } = await insertRecords(tx, org, "live", LIVE_RECORDS, "seed");
    say(`seeding ${LEADS.toLocaleString("en")} leads (one transaction, one to two minutes) ...`);
    // Already delivered ('sent'), so no forwarding worker on this database picks them up. IDs in order (UUIDv7-like).
    await tx`
      INSERT INTO leads (id, partner_id, listing_id, broker_id, office_id, organization_id, buyer_name, buyer_email, message, created_at, delivery_state, delivered_at)
      SELECT ('01800000-0000-7000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, ${org.partnerId},
             (${listingIds}::bigint[])[1 + i % ${LIVE_RECORDS}], (${brokerIds}::bigint[])[1 + i % ${LIVE_RECORDS}], ${org.officeId}, ${org.organizationId},
             'Buyer ' || i, 'buyer' || i || '@example.com', 'I am interested in this business; please call me back.', now(), 'sent', now()
      FROM generate_series(0, ${LEADS - 1}) i`;
  });
  say("vacuum analyze leads ...");
  await sql`VACUUM (ANALYZE) leads`;
  return (performance.now() - began) / 1000;
}

async function testPartner(): Promise<Org> {
  return (await findOrg(sql, TEST_PARTNER)) ?? (await sql.begin((tx) => createOrg(tx, TEST_PARTNER)));
}

/** Writes the test records, then times the purge of that partner's test data. */
async function phase(org: Org, label: string): Promise<{ ms: number; counts: PurgeCounts }> {
  await purgeTestData(sql, { partnerId: org.partnerId }); // whatever an interrupted earlier run left
  await sql.begin(async (tx) => {
    await insertRecords(tx, org, "test", TEST_BROKERS, `purge-${label}`);
    await tx`
      INSERT INTO leads (id, partner_id, listing_id, broker_id, office_id, organization_id, buyer_name, buyer_email, message, delivery_state, mode)
      SELECT gen_random_uuid(), ${org.partnerId}, l.id, l.broker_id, ${org.officeId}, ${org.organizationId}, 'Test buyer', 'buyer@example.com', 'A simulated lead', 'skipped', 'test'
      FROM listings l WHERE l.partner_id = ${org.partnerId} AND l.mode = 'test'`;
  });
  await sql`ANALYZE brokers`;
  await sql`ANALYZE listings`;
  const began = performance.now();
  const counts = await purgeTestData(sql, { partnerId: org.partnerId });
  const ms = performance.now() - began;
  if (counts.brokers !== TEST_BROKERS || counts.listings !== TEST_BROKERS || counts.leads !== TEST_BROKERS) {
    throw new Error(`${label}: the purge deleted ${JSON.stringify(counts)}, expected ${TEST_BROKERS} of each`);
  }
  say(`${label}: purged ${TEST_BROKERS} test brokers, listings and leads in ${Math.round(ms)} ms`);
  return { ms, counts };
}

const round = (n: number) => Math.round(n);
let without: number;
let withIndex: number;
let indexBuildMs: number;
let totalLeads: number;
let seeded: number | null;
try {
  seeded = await seedLeads();
  say(seeded === null ? "bench leads already seeded; reusing them" : `seeded in ${seeded.toFixed(1)} s`);
  const [n] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM leads`;
  totalLeads = n!.n;
  const org = await testPartner();
  // The table in the cache for both phases alike.
  await sql`SELECT count(*) FROM leads`;

  await sql`DROP INDEX IF EXISTS leads_broker`;
  without = (await phase(org, "without-index")).ms;

  const building = performance.now();
  await sql`CREATE INDEX IF NOT EXISTS leads_broker ON leads (broker_id)`;
  indexBuildMs = performance.now() - building;
  say(`CREATE INDEX leads_broker over ${totalLeads.toLocaleString("en")} leads: ${Math.round(indexBuildMs)} ms`);
  withIndex = (await phase(org, "with-index")).ms;
} finally {
  // Never leave the database without the index, whatever happened.
  await sql`CREATE INDEX IF NOT EXISTS leads_broker ON leads (broker_id)`.catch(() => {});
  await sql.end();
}

const ratio = Math.round((without / withIndex) * 10) / 10;
const result = {
  scenario: "test-data purge, 1M leads",
  figure: round(withIndex),
  unit: "ms",
  baseline: round(without),
  baselineLabel: "without leads(broker_id) index",
  ratio,
  target: TARGET_SPEEDUP,
  pass: ratio >= TARGET_SPEEDUP,
  notes: `purge of ${TEST_BROKERS} test brokers (a listing and a lead each) with ${totalLeads.toLocaleString("en")} leads in the table: ${round(without)} ms without the index, ${round(withIndex)} ms with it (${ratio}x); CREATE INDEX took ${round(indexBuildMs)} ms; seed ${seeded === null ? "reused" : `${seeded.toFixed(0)} s`}`,
  withoutIndexMs: round(without),
  withIndexMs: round(withIndex),
  indexBuildMs: round(indexBuildMs),
  leads: totalLeads,
  testBrokers: TEST_BROKERS,
};
say(result.notes);
console.log(JSON.stringify(result));
process.exit(0);
