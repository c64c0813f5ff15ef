// MediaStorage on S3-compatible object storage through Bun's built-in client (Bun.S3Client): objects are keyed
// `<S3_PREFIX><ab>/<name>` like the directory layout. A PUT is atomic (a reader never sees half an object), so
// there are no temporary files; storing an existing name writes it again, which refreshes its Last-Modified
// (the garbage collector's clock) exactly as the directory implementation refreshes a file's time.
import { isMediaName, mediaRelativePath } from "@pss/contracts";
import type { MediaStorage, S3StorageConfig, StoredFile } from "./media-storage.ts";

/** Storage did not answer within the configured time. */
export class StorageTimeoutError extends Error {
  readonly code = "ETIMEDOUT";
  constructor(what: string, ms: number) {
    super(`object storage did not answer ${what} within ${ms} ms`);
    this.name = "StorageTimeoutError";
  }
}

const NOT_FOUND = new Set(["NoSuchKey", "NotFound", "ENOENT"]);
const isNotFound = (err: unknown) => NOT_FOUND.has(String((err as { code?: unknown } | null)?.code ?? ""));

async function within<T>(what: string, ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: Timer | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new StorageTimeoutError(what, ms));
    }, ms);
  });
  try {
    return await Promise.race([work(controller.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function createS3MediaStorage(config: S3StorageConfig): MediaStorage {
  const options = (endpoint: string | undefined) => ({
    endpoint,
    bucket: config.bucket,
    region: config.region,
    accessKeyId: config.accessKeyId,
    secretAccessKey: config.secretAccessKey,
    sessionToken: config.sessionToken,
    virtualHostedStyle: !config.forcePathStyle,
  });
  const client = new Bun.S3Client(options(config.endpoint));
  // Presigned URLs carry the host they were signed for: sign the one browsers reach when it differs.
  const publicClient =
    config.publicEndpoint && config.publicEndpoint !== config.endpoint
      ? new Bun.S3Client(options(config.publicEndpoint))
      : client;
  const ms = config.requestTimeoutMs;
  const keyOf = (name: string) => {
    if (!isMediaName(name)) throw new Error(`not a media name: ${name}`);
    return `${config.prefix}${mediaRelativePath(name)}`;
  };
  /** The name of a listed key, or null for anything that is not a variant of ours. */
  const nameOf = (key: string) => {
    if (!key.startsWith(config.prefix)) return null;
    const [shard, name, ...rest] = key.slice(config.prefix.length).split("/");
    return rest.length === 0 && name && isMediaName(name) && shard === name.slice(0, 2) ? name : null;
  };

  async function stat(name: string): Promise<StoredFile | null> {
    try {
      const info = await within("a HEAD request", ms, () => client.stat(keyOf(name)));
      return { name, modifiedAt: info.lastModified };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  return {
    kind: "s3",
    async put(name, bytes, contentType) {
      await within("a PUT request", ms, () => client.write(keyOf(name), bytes, { type: contentType }));
    },
    exists: async (name) => (await stat(name)) !== null,
    async delete(name) {
      await within("a DELETE request", ms, () => client.delete(keyOf(name)));
    },
    stat,
    async *list() {
      let continuationToken: string | undefined;
      do {
        const page = await within("a LIST request", ms, () =>
          client.list({ prefix: config.prefix, maxKeys: config.listPageSize ?? 1000, continuationToken }),
        );
        for (const object of page.contents ?? []) {
          const name = nameOf(object.key);
          if (name && object.lastModified) yield { name, modifiedAt: new Date(object.lastModified) };
        }
        continuationToken = page.isTruncated ? page.nextContinuationToken : undefined;
      } while (continuationToken);
    },
    async read(name) {
      // One signed GET whose status tells "absent" from "here it is"; the body streams through unbuffered.
      const url = client.presign(keyOf(name), { method: "GET", expiresIn: 60 });
      const res = await within("a GET request", ms, (signal) => fetch(url, { signal }));
      if (res.status === 404) {
        await res.body?.cancel();
        return null;
      }
      if (!res.ok || !res.body) {
        await res.body?.cancel();
        throw new Error(`object storage answered ${res.status} to a GET request`);
      }
      const length = Number(res.headers.get("content-length"));
      return { body: res.body, size: Number.isFinite(length) && length >= 0 ? length : null };
    },
    presign: (name, expiresInSeconds) =>
      publicClient.presign(keyOf(name), { method: "GET", expiresIn: expiresInSeconds }),
    // A PUT either happened whole or not at all: nothing is ever left half-written.
    removeAbandonedWrites: async () => 0,
    async check() {
      await within("a LIST request", ms, () => client.list({ prefix: config.prefix, maxKeys: 1 }));
    },
  };
}
