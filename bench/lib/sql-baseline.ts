// The baseline for partner writes: the same transaction a listing create or update boils down to
// (upsert of the listing row, its photos, one outbox row), driven straight from a PostgreSQL client with the
// given number of concurrent transactions. No HTTP, no JSON validation, no merge.
import type postgres from "postgres";
import { externalId, listingBody } from "./bodies.mjs";

export async function sqlBaseline(args: {
  sql: postgres.Sql;
  partnerId: string;
  brokerId: string;
  concurrency: number;
  durationSeconds: number;
  prefix: string;
  mode: "new" | "update";
  existing?: number;
}): Promise<{ tps: number; p99: number }> {
  const { sql } = args;
  const deadline = performance.now() + args.durationSeconds * 1000;
  let done = 0;
  let n = 0;
  const latencies: number[] = [];
  async function worker() {
    while (performance.now() < deadline) {
      const i = args.mode === "new" ? n++ : n++ % (args.existing ?? 1);
      const body = listingBody("bench-broker", i);
      if (args.mode === "update") body.financials.askingPrice = 100000 + n;
      const started = performance.now();
      await sql.begin(async (tx) => {
        const [row] = await tx`
          INSERT INTO listings (partner_id, external_id, broker_id, status, business_type, title, description, established_at,
            street_address1, city, state, postal_code, country, visibility, financials, property, financing, content_hash)
          VALUES (${args.partnerId}, ${externalId(args.prefix, i)}, ${args.brokerId}, ${body.status}, ${body.businessType}, ${body.title},
            ${body.description}, ${body.establishedAt}, ${body.location.streetAddress1}, ${body.location.city}, ${body.location.state},
            ${body.location.postalCode}, ${body.location.country}, ${body.location.visibility}, ${tx.json(body.financials)}, ${tx.json(body.property as never)},
            ${tx.json(body.financing as never)}, '\\x01')
          ON CONFLICT (partner_id, mode, external_id) DO UPDATE SET financials = EXCLUDED.financials, version = listings.version + 1, updated_at = now()
          RETURNING id, version`;
        if (row!.version === 1) {
          await tx`INSERT INTO listing_photos ${tx(body.photos.map((p: { url: string; sortKey: number }) => ({ listing_id: row!.id, url: p.url, sort_key: p.sortKey })))}`;
        }
        await tx`INSERT INTO outbox (topic, message_key, payload) VALUES ('bench.baseline', ${String(row!.id)}, ${tx.json({ version: row!.version, payload: body } as never)})`;
      });
      latencies.push(performance.now() - started);
      done++;
    }
  }
  const began = performance.now();
  await Promise.all(Array.from({ length: args.concurrency }, worker));
  const seconds = (performance.now() - began) / 1000;
  latencies.sort((a, b) => a - b);
  // The relay of a bench API may not publish these rows (their topic does not exist): remove them.
  await sql`DELETE FROM outbox WHERE topic = 'bench.baseline'`;
  return { tps: done / seconds, p99: latencies[Math.floor(latencies.length * 0.99)] ?? 0 };
}
