// Streaming helpers for backup files: bytes are hashed as they pass, so no file is ever held in memory whole.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";

/** Passes bytes through unchanged, hashing and counting them (and the newlines: COPY's text format ends each row with one). */
export function tap(): Transform & { sha256(): string; bytes: number; newlines: number } {
  const hash = createHash("sha256");
  const t = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      t.bytes += chunk.length;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) t.newlines++;
      done(null, chunk);
    },
  }) as Transform & { sha256(): string; bytes: number; newlines: number };
  t.bytes = 0;
  t.newlines = 0;
  t.sha256 = () => hash.digest("hex");
  return t;
}

/** SHA-256 of a file, streamed; null when the file cannot be read. */
export async function fileSha256(path: string): Promise<string | null> {
  const hash = createHash("sha256");
  try {
    await pipeline(createReadStream(path), async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) hash.update(chunk);
    });
  } catch {
    return null;
  }
  return hash.digest("hex");
}
