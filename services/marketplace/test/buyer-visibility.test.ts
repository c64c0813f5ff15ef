// The one buyer-visibility rule has two forms: SQL (buyer-visibility.ts, every buyer-facing read) and TypeScript
// (isVisibleToBuyers in @pss/contracts, what the indexer puts in the search index). PostgreSQL evaluates the SQL
// form here for every status and mode, and both must say the same.
import { afterAll, expect, test } from "bun:test";
import { isVisibleToBuyers, LISTING_STATUSES, RECORD_MODES } from "@pss/contracts";
import postgres from "postgres";
import { testUrls } from "../../../test/support/env.ts";
import { brokerVisibleToBuyers, listingGoneForBuyers, listingVisibleToBuyers } from "../src/buyers/buyer-visibility.ts";

const sql = postgres(testUrls().DATABASE_URL, { max: 1, onnotice: () => {} });
afterAll(() => sql.end());

const combinations = LISTING_STATUSES.flatMap((status) => RECORD_MODES.map((mode) => ({ status, mode })));

test("the SQL rule and isVisibleToBuyers agree for every status and mode: only live listings in a visible status", async () => {
  const rows = await sql<{ status: string; mode: string; visible: boolean; gone: boolean }[]>`
    SELECT l.status, l.mode, ${listingVisibleToBuyers(sql, "l")} AS visible, ${listingGoneForBuyers(sql, "l")} AS gone
    FROM unnest(${combinations.map((c) => c.status)}::text[], ${combinations.map((c) => c.mode)}::text[]) AS l(status, mode)`;
  expect(rows).toHaveLength(combinations.length);
  for (const r of rows) {
    expect({ ...r, visible: r.visible }).toEqual({ ...r, visible: isVisibleToBuyers(r) });
    // A test record is never "gone" either: to buyers it never existed (404, not 410).
    expect({ ...r, gone: r.gone }).toEqual({
      ...r,
      gone: r.mode === "live" && (r.status === "SOLD" || r.status === "ARCHIVED"),
    });
  }
  expect(
    rows
      .filter((r) => r.visible)
      .map((r) => r.status)
      .sort(),
  ).toEqual(["FOR_SALE", "PENDING_CONTRACT", "REVIEWING_OFFERS", "UNDER_CONTRACT"]);
});

test("a broker is public only when live", async () => {
  const rows = await sql<{ mode: string; visible: boolean }[]>`
    SELECT b.mode, ${brokerVisibleToBuyers(sql, "b")} AS visible FROM unnest(${[...RECORD_MODES]}::text[]) AS b(mode)`;
  expect(Object.fromEntries(rows.map((r) => [r.mode, r.visible]))).toEqual({ live: true, test: false });
});
