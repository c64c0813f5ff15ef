// A full updatedSince pass, started while writes are going on and followed to the end, misses nothing that was
// committed before it ended, even when some writing transactions are held open while the reader pages on.
// Real API and PostgreSQL. The slow writers do what the API's write does (new version, updated_at = now())
// on their own connection, inside a transaction kept open with pg_sleep: their updated_at is older than that
// of many writes that commit before them, which is exactly what paging by updated_at used to lose.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import { sample, startApi, type ApiHarness, type Partner } from "./support/harness.ts";

let api: ApiHarness;
let slowSql: postgres.Sql;

beforeAll(async () => {
  api = await startApi({ relay: false });
  slowSql = postgres(testUrls().DATABASE_URL, { max: 4, onnotice: () => {} });
}, 60_000);
afterAll(async () => {
  await slowSql?.end({ timeout: 5 });
  await api?.stop();
});

type Kind = "listings" | "brokers";
/** A write the writer saw committed: the record, the ordinal of the write on that record (its title or name), when. */
interface Ack {
  externalId: string;
  ordinal: number;
  at: number;
}
const marker = (ordinal: number) => `v${ordinal}`;

/** The API's update, done by hand in a transaction held open for `holdMs` after the row was written. */
async function slowWrite(
  kind: Kind,
  partnerId: string,
  externalId: string,
  ordinal: number,
  holdMs: number,
  started: () => void,
): Promise<Ack> {
  await slowSql.begin(async (tx) => {
    if (kind === "listings")
      await tx`UPDATE listings SET title = ${marker(ordinal)}, version = version + 1, updated_at = now() WHERE partner_id = ${partnerId} AND external_id = ${externalId}`;
    else
      await tx`UPDATE brokers SET name = ${marker(ordinal)}, version = version + 1, updated_at = now() WHERE partner_id = ${partnerId} AND external_id = ${externalId}`;
    started();
    await tx`SELECT pg_sleep(${holdMs / 1000})`;
  });
  return { externalId, ordinal, at: Date.now() };
}

async function scenario(kind: Kind) {
  const partner: Partner = await api.createPartner();
  const brokerId = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
  const path = (id: string) => `/partner/v1/${kind}/${id}`;
  const body = (ordinal: number) =>
    kind === "listings"
      ? sample.listing(brokerId, { title: marker(ordinal) })
      : sample.broker({ name: marker(ordinal) });

  const [{ since }] = (await api.sql`SELECT now() AS since`) as unknown as [{ since: Date }];
  // Records written before the pass: three for the slow writers, three per fast writer. Each record has one
  // writer, so the ordinal of its writes is exact.
  const slowIds = Array.from({ length: 3 }, () => uniqueName(`${kind}-slow`));
  const fastIds = Array.from({ length: 3 }, () => Array.from({ length: 3 }, () => uniqueName(`${kind}-fast`)));
  const acks: Ack[] = [];
  for (const id of [...slowIds, ...fastIds.flat()]) {
    expect((await partner.put(path(id), body(1))).status).toBe(201);
    acks.push({ externalId: id, ordinal: 1, at: Date.now() });
  }

  // Three slow writers hold their transactions 1.2 to 2 s: the pass pages past their updated_at meanwhile.
  let held = 0;
  let slow: Promise<void>[] = [];
  await new Promise<void>((resolve) => {
    slow = slowIds.map((id, k) =>
      slowWrite(kind, partner.partnerId, id, 2, 1200 + 400 * k, () => ++held === slowIds.length && resolve()).then(
        (ack) => void acks.push(ack),
      ),
    );
  });

  // Fast writers through the API: updates of their own records and new ones, committing before, during and
  // after the slow ones.
  // They go on for 2.5 s, past the slow commits, so the pass ends after those whatever the paging does, and until
  // they made 40 writes between them however slow a busy machine makes each (at most 30 s).
  const fastUntil = Date.now() + 2500;
  const fastGiveUp = Date.now() + 30_000;
  let fastWrites = 0;
  const writing = () => (Date.now() < fastUntil || fastWrites < 40) && Date.now() < fastGiveUp;
  const fast = fastIds.map(async (own, w) => {
    const ordinals = new Map(own.map((id) => [id, 1]));
    for (let n = 0; writing() && n < 200; n++) {
      let id: string;
      if (n % 4 === 3) {
        id = uniqueName(`${kind}-new-${w}`);
        ordinals.set(id, 0);
      } else id = own[n % own.length]!;
      const ordinal = ordinals.get(id)! + 1;
      ordinals.set(id, ordinal);
      const res = await partner.put(path(id), body(ordinal));
      expect([200, 201]).toContain(res.status);
      acks.push({ externalId: id, ordinal, at: Date.now() });
      fastWrites++;
      await Bun.sleep(20);
    }
  });

  // The pass: starts during the writes, small pages, follows nextCursor until null.
  await Bun.sleep(100);
  const seen = new Map<string, number>();
  let cursor: string | null = null;
  let lastRequestAt = 0;
  let pages = 0;
  do {
    lastRequestAt = Date.now();
    const res = await partner.get(
      `/partner/v1/${kind}?limit=2&updatedSince=${encodeURIComponent(since.toISOString())}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    expect(res.status).toBe(200);
    for (const r of res.body.results as {
      externalListingId?: string;
      externalBrokerId?: string;
      title?: string;
      name?: string;
      updatedAt: string;
    }[]) {
      const externalId = (r.externalListingId ?? r.externalBrokerId)!;
      if (externalId === brokerId) continue;
      expect(Date.parse(r.updatedAt)).toBeGreaterThanOrEqual(since.getTime());
      const ordinal = Number((r.title ?? r.name)!.slice(1));
      seen.set(externalId, Math.max(seen.get(externalId) ?? 0, ordinal));
    }
    cursor = res.body.nextCursor;
    if (++pages > 1000) throw new Error("the pass does not end");
    // Slower than the writers: the pass is still going when the slow writes commit, whatever the paging does.
    await Bun.sleep(40);
  } while (cursor !== null);
  await Promise.all([...fast, ...slow]);

  const committedBeforeEnd = acks.filter((a) => a.at < lastRequestAt);
  // The pass really ran during the writes: writes committed both before it ended and after.
  expect(committedBeforeEnd.length).toBeGreaterThan(30);
  // ...and the slow writes (the case that used to be lost) committed while it was still going.
  expect(committedBeforeEnd.filter((a) => slowIds.includes(a.externalId) && a.ordinal === 2)).toHaveLength(
    slowIds.length,
  );
  // Every write acknowledged before the pass's last request was returned by the pass, as written or newer.
  const missed = committedBeforeEnd
    .filter((a) => (seen.get(a.externalId) ?? 0) < a.ordinal)
    .map((a) => `${a.externalId} ${marker(a.ordinal)}`);
  expect(missed).toEqual([]);
}

describe("commit-safe reconciliation paging", () => {
  test("listings: a full updatedSince pass started during the writes misses nothing committed before it ended", async () => {
    await scenario("listings");
  }, 60_000);

  test("brokers: the same with broker writes", async () => {
    await scenario("brokers");
  }, 60_000);
});
