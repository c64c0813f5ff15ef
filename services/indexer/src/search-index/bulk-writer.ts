// Bulk writes with external versions: OpenSearch keeps a document (or a delete's tombstone) only when the
// version is newer, so a late or redelivered event can never bring back an older state.
import type { Client } from "@opensearch-project/opensearch";
import type { ListingSearchDocument } from "@pss/contracts";
import { openSearchBody } from "@pss/service-kit";

export type IndexOperation =
  | {
      kind: "index";
      id: number;
      version: number;
      document: ListingSearchDocument;
      versionType: "external" | "external_gte";
    }
  | { kind: "delete"; id: number; version: number };

/** applied: written; superseded: the index already holds this or a newer version; rejected: can never succeed. */
export type OperationOutcome = { op: IndexOperation; result: "applied" | "superseded" | "rejected"; reason?: string };

/** Any failure that another attempt may fix: the caller retries the whole batch without committing. */
export class SearchUnavailableError extends Error {
  override name = "SearchUnavailableError";
}

const CHUNK = 500;

export async function writeBulk(
  client: Client,
  alias: string,
  ops: IndexOperation[],
  opts: { refresh?: boolean | "wait_for" } = {},
): Promise<OperationOutcome[]> {
  const outcomes: OperationOutcome[] = [];
  for (let i = 0; i < ops.length; i += CHUNK)
    outcomes.push(...(await writeChunk(client, alias, ops.slice(i, i + CHUNK), opts)));
  return outcomes;
}

async function writeChunk(
  client: Client,
  alias: string,
  ops: IndexOperation[],
  opts: { refresh?: boolean | "wait_for" },
): Promise<OperationOutcome[]> {
  const body: unknown[] = [];
  for (const op of ops) {
    if (op.kind === "index") {
      body.push(
        { index: { _index: alias, _id: String(op.id), version: op.version, version_type: op.versionType } },
        op.document,
      );
    } else {
      body.push({ delete: { _index: alias, _id: String(op.id), version: op.version, version_type: "external" } });
    }
  }
  let items: Record<string, { status: number; result?: string; error?: { type?: string; reason?: string } }>[];
  try {
    const res = await client.bulk({ body: openSearchBody(body), refresh: opts.refresh ?? false });
    items = (res.body as { items: typeof items }).items;
  } catch (err) {
    throw new SearchUnavailableError(`bulk request failed: ${(err as Error).message}`);
  }
  const outcomes: OperationOutcome[] = [];
  const transient: string[] = [];
  items.forEach((item, i) => {
    const op = ops[i]!;
    const r = Object.values(item)[0]!;
    if (r.status < 300 || (op.kind === "delete" && r.status === 404)) outcomes.push({ op, result: "applied" });
    else if (r.status === 409) outcomes.push({ op, result: "superseded" });
    else if (r.status === 429 || r.status >= 500 || r.error?.type === "index_not_found_exception")
      transient.push(`${op.id}: ${r.status} ${r.error?.type ?? ""}`);
    else
      outcomes.push({
        op,
        result: "rejected",
        reason: `${r.status} ${r.error?.type ?? ""}: ${r.error?.reason ?? "rejected"}`.slice(0, 500),
      });
  });
  // Retrying the whole chunk is safe: what was applied comes back as "superseded".
  if (transient.length > 0) throw new SearchUnavailableError(`bulk items failed: ${transient.slice(0, 3).join("; ")}`);
  return outcomes;
}
