// Reads a commit-safe list (GET /partner/v1/listings or /partner/v1/brokers) to its end the way a reconciling
// client does (docs/partner-api.md, "Paging and reconciliation"): a page stops before records written after the
// oldest transaction still running anywhere on the PostgreSQL server (the horizon is the server's, not this
// database's), answering fewer of them, possibly none, with a nextCursor to come back with. Other tests' and other
// runs' transactions on the same server hold it back for a while; a first page alone proves nothing is missing.
import { expect } from "bun:test";
import type { TestResponse } from "./harness.ts";

/** Every record of the list at `path` (its query kept, `cursor` added), following nextCursor to null. */
export async function allRecords(
  get: (path: string) => Promise<TestResponse>,
  path: string,
  timeoutMs = 30_000,
): Promise<any[]> {
  const records: any[] = [];
  const deadline = Date.now() + timeoutMs;
  let cursor: string | null = null;
  do {
    if (Date.now() > deadline) throw new Error(`${path}: the list did not reach its end within ${timeoutMs} ms`);
    const res = await get(`${path}${cursor ? `${path.includes("?") ? "&" : "?"}cursor=${cursor}` : ""}`);
    expect(res.status).toBe(200);
    records.push(...res.body.results);
    cursor = res.body.nextCursor;
  } while (cursor);
  return records;
}
