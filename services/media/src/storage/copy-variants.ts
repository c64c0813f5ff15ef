// One-shot copy of stored variants from one storage to another (admin CLI `media copy-to-s3`: a local MEDIA_DIR
// into object storage). Names are content addresses, so a name already present at the destination holds the
// same bytes and is skipped: the copy can be interrupted and run again, and a second run after switching the
// services to the new storage picks up what was written meanwhile. Records need no change (they keep names).
import { mediaContentType } from "@pss/contracts";
import type { MediaStorage } from "@pss/service-kit";
import { createWorkPool } from "../jobs/work-pool.ts";

export interface CopyResult {
  examined: number;
  copied: number;
  /** Already at the destination (same name, so the same bytes). */
  alreadyThere: number;
  bytes: number;
  failed: number;
  /** The first failures, with their reason. */
  failures: { name: string; reason: string }[];
  dryRun: boolean;
}

const MAX_REPORTED_FAILURES = 100;

export async function copyVariants(
  from: MediaStorage,
  to: MediaStorage,
  opts: { dryRun?: boolean; concurrency?: number; onProgress?: (r: CopyResult) => void } = {},
): Promise<CopyResult> {
  const result: CopyResult = {
    examined: 0,
    copied: 0,
    alreadyThere: 0,
    bytes: 0,
    failed: 0,
    failures: [],
    dryRun: opts.dryRun === true,
  };
  const pool = createWorkPool(opts.concurrency ?? 8);
  const fail = (name: string, reason: string) => {
    result.failed++;
    if (result.failures.length < MAX_REPORTED_FAILURES) result.failures.push({ name, reason });
  };
  const copyOne = async (name: string) => {
    try {
      if (await to.exists(name)) {
        result.alreadyThere++;
        return;
      }
      const stored = await from.read(name);
      if (!stored) return fail(name, "disappeared from the source while copying");
      const bytes = new Uint8Array(await new Response(stored.body).arrayBuffer());
      // The name is the SHA-256 of the bytes: a file that does not match it is damaged, and is not spread further.
      if (new Bun.CryptoHasher("sha256").update(bytes).digest("hex") !== name.slice(0, 64))
        return fail(name, "content does not match its name (damaged file)");
      if (!result.dryRun) await to.put(name, bytes, mediaContentType(name));
      result.copied++;
      result.bytes += bytes.byteLength;
    } catch (err) {
      fail(name, (err as Error).message);
    } finally {
      if (++result.examined % 500 === 0) opts.onProgress?.(result);
    }
  };
  const inFlight = new Set<Promise<void>>();
  for await (const file of from.list()) {
    const task = pool.run(() => copyOne(file.name)).finally(() => inFlight.delete(task));
    inFlight.add(task);
    // Listing runs ahead of copying by at most a few pools' worth.
    if (inFlight.size >= 64) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  return result;
}
