// The content hash a checkpoint keeps per record: SHA-256 of the body exactly as it is sent (its JSON text).
// The JSON text is made once per record and serves the size check, this hash and the request itself. A feed
// that writes the same content with its keys in another order hashes differently: such a record is sent
// again, which the API stores as a no-op (a changed record is never skipped). Sorting keys instead cost
// seven times the time of the serialisation itself, on every record of every run.
import { createHash } from "node:crypto";

export function contentHash(json: string): string {
  return createHash("sha256").update(json).digest("base64url");
}
