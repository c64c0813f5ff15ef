// Where processed image variants live, behind one small interface with two implementations: a directory
// (local-media-storage.ts, for one-host set-ups) and S3-compatible object storage (s3-media-storage.ts). The
// media service writes, the API serves, the garbage collector lists and deletes, the admin CLI copies.
// Names are content addresses (@pss/contracts media.ts), so a name's bytes never change and identical images
// are stored once. Storage knows names only: public URLs are built from configuration when records are read.
import { checkSecret, DEVELOPMENT_S3_SECRETS } from "./production-safety.ts";
import type { EnvReader } from "./config.ts";
import { createLocalMediaStorage } from "./local-media-storage.ts";
import { createS3MediaStorage } from "./s3-media-storage.ts";

export interface StoredFile {
  name: string;
  modifiedAt: Date;
}

/** A stored file's bytes, ready to be a response body. */
export interface StoredObject {
  body: ReadableStream<Uint8Array> | Blob;
  size: number | null;
}

export interface MediaStorage {
  readonly kind: "local" | "s3";
  /** Stores bytes under name; an existing name is kept and marked fresh (the garbage collector's grace restarts). */
  put(name: string, bytes: Uint8Array, contentType: string): Promise<void>;
  exists(name: string): Promise<boolean>;
  /** Deleting a name that is not stored is not an error. */
  delete(name: string): Promise<void>;
  /** Every stored name, for the garbage collector and the copy to object storage. */
  list(): AsyncIterable<StoredFile>;
  stat(name: string): Promise<StoredFile | null>;
  /** The stored bytes, or null when the name is not stored. Throws when the storage cannot be reached. */
  read(name: string): Promise<StoredObject | null>;
  /** A URL that fetches the name straight from storage for `expiresInSeconds`; null when the storage has none. */
  presign(name: string, expiresInSeconds: number): string | null;
  /** Removes leftovers of writes interrupted before `olderThan`. */
  removeAbandonedWrites(olderThan: Date): Promise<number>;
  /** Throws when the storage cannot be used now (readiness probes). */
  check(): Promise<void>;
}

/** `<sha256 of bytes>.<ext>` */
export function contentName(bytes: Uint8Array, format: "webp" | "jpeg"): string {
  return `${new Bun.CryptoHasher("sha256").update(bytes).digest("hex")}.${format === "jpeg" ? "jpg" : "webp"}`;
}

export const MEDIA_STORAGE_KINDS = ["local", "s3"] as const;

export interface LocalStorageConfig {
  kind: "local";
  dir: string;
}

export interface S3StorageConfig {
  kind: "s3";
  /** Unset: AWS's endpoint for the region. */
  endpoint?: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** Path-style addresses (`<endpoint>/<bucket>/<key>`), what S3Proxy, MinIO and most S3-compatible servers want. */
  forcePathStyle: boolean;
  /** Prepended to every key (`media/` keeps variants apart from other objects in a shared bucket). */
  prefix: string;
  /** Endpoint that browsers reach, for presigned URLs (MEDIA_DELIVERY=redirect); defaults to `endpoint`. */
  publicEndpoint?: string;
  /** Per-request time limit. */
  requestTimeoutMs: number;
  /** Keys per LIST request (S3 allows at most 1000); tests use a small one to cross pages. */
  listPageSize?: number;
}

export type MediaStorageConfig = LocalStorageConfig | S3StorageConfig;

/**
 * MEDIA_STORAGE and what it needs: MEDIA_DIR for `local`; S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY
 * (plus the optional S3_* below) for `s3`. Variables of the other kind are not read.
 */
export function readMediaStorageConfig(r: EnvReader, fallbackKind: "local" | "s3" = "local"): MediaStorageConfig {
  const kind = r.oneOf("MEDIA_STORAGE", MEDIA_STORAGE_KINDS, fallbackKind);
  if (kind === "local") return { kind, dir: r.string("MEDIA_DIR", ".data/media") };
  const endpoint = r.optionalString("S3_ENDPOINT") === undefined ? undefined : r.url("S3_ENDPOINT");
  const publicEndpoint = r.optionalString("S3_PUBLIC_ENDPOINT") === undefined ? undefined : r.url("S3_PUBLIC_ENDPOINT");
  const prefix = r.optionalString("S3_PREFIX") ?? "";
  checkSecret(r, "S3_SECRET_ACCESS_KEY", r.optionalString("S3_SECRET_ACCESS_KEY"), DEVELOPMENT_S3_SECRETS);
  return {
    kind,
    endpoint: endpoint?.replace(/\/+$/, ""),
    bucket: r.string("S3_BUCKET"),
    region: r.string("S3_REGION", "us-east-1"),
    accessKeyId: r.string("S3_ACCESS_KEY_ID"),
    secretAccessKey: r.string("S3_SECRET_ACCESS_KEY"),
    sessionToken: r.optionalString("S3_SESSION_TOKEN"),
    forcePathStyle: r.bool("S3_FORCE_PATH_STYLE", true),
    prefix: prefix.replace(/^\/+/, ""),
    publicEndpoint: publicEndpoint?.replace(/\/+$/, ""),
    requestTimeoutMs: r.int("S3_REQUEST_TIMEOUT_MS", 10_000, { min: 100, max: 600_000 }),
  };
}

/** What logs and start-up lines may show of the configuration: never the credentials. */
export function describeMediaStorage(config: MediaStorageConfig): Record<string, string> {
  return config.kind === "local"
    ? { storage: "local", mediaDir: config.dir }
    : {
        storage: "s3",
        endpoint: config.endpoint ?? `AWS (${config.region})`,
        bucket: config.bucket,
        prefix: config.prefix,
      };
}

export function createMediaStorage(config: MediaStorageConfig): MediaStorage {
  return config.kind === "local" ? createLocalMediaStorage({ dir: config.dir }) : createS3MediaStorage(config);
}
