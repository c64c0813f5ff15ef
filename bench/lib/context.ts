// What every scenario gets: infrastructure URLs, a database client, a partner with a key and a broker.
import postgres from "postgres";
import Redis from "ioredis";
import { migrate } from "@pss/database";
import { up, type InfraUrls } from "../../infra/src/index.ts";
import { createPartnerAdmin } from "../../services/api/src/admin/partner-admin.ts";

export interface BenchContext {
  urls: InfraUrls;
  sql: postgres.Sql;
  durationSeconds: number;
  warmupSeconds: number;
  partner: { partnerId: string; apiKey: string; officeId: number; organizationId: number };
  brokerExternalId: string;
  brokerId: string;
  close(): Promise<void>;
}

export async function createBenchContext(opts: {
  durationSeconds: number;
  warmupSeconds: number;
}): Promise<BenchContext> {
  const urls = await up();
  const sql = postgres(urls.DATABASE_URL, { max: 40, onnotice: () => {} });
  await migrate(sql);
  const redis = new Redis(urls.REDIS_URL, { lazyConnect: true });
  const admin = createPartnerAdmin({ sql, redis });
  const partner = await admin.createPartner({ name: `bench-${Date.now()}`, leadTracking: true });
  const brokerExternalId = "bench-broker";
  // The broker comes in through the real API path later; here it only has to exist.
  const { brokerBody } = await import("./bodies.mjs");
  const body = brokerBody(0);
  const [office] = await sql`SELECT ${partner.officeId}::int AS id`;
  const [broker] = await sql`
    INSERT INTO brokers (partner_id, external_id, office_id, name, email, content_hash)
    VALUES (${partner.partnerId}, ${brokerExternalId}, ${office!.id}, ${body.name}, ${body.email}, '\\x00')
    RETURNING id::text AS id`;
  return {
    urls,
    sql,
    durationSeconds: opts.durationSeconds,
    warmupSeconds: opts.warmupSeconds,
    partner,
    brokerExternalId,
    brokerId: broker!.id,
    async close() {
      // The listings this run wrote go (their photos and history with them), so runs do not pile rows up and
      // the cost curve's small table stays small. Listings that received benchmark leads stay (leads keep them).
      await sql`
        DELETE FROM listings l WHERE l.partner_id = ${partner.partnerId}
          AND NOT EXISTS (SELECT 1 FROM leads WHERE leads.listing_id = l.id)`.catch((err) =>
        console.error(`bench: could not remove this run's listings: ${(err as Error).message}`),
      );
      redis.disconnect();
      await sql.end();
    },
  };
}
