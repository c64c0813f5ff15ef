// Why an image could not be processed, in words a partner can act on. Transient ones are retried (bounded).
// Whose failure it is decides what it costs (classifyJobError, the one place this is decided): a problem with
// the image or its host spends one of the image's attempts (MEDIA_MAX_ATTEMPTS); a failure of one of OUR
// dependencies (the object store, PostgreSQL) never does: the job waits until it answers again (outage-wait.ts).
import { isDependencyUnavailable } from "@pss/service-kit";

export class MediaFailure extends Error {
  constructor(
    readonly reason: string,
    readonly transient: boolean,
  ) {
    super(reason);
    this.name = "MediaFailure";
  }
}

const permanent = (reason: string) => () => new MediaFailure(reason, false);
const transient = (reason: string) => () => new MediaFailure(reason, true);

export const Failures = {
  unsupportedScheme: permanent("unsupported URL scheme"),
  addressNotAllowed: permanent("address not allowed"),
  hostNotFound: permanent("host not found"),
  tooManyRedirects: permanent("too many redirects"),
  tooLarge: permanent("image too large"),
  dimensionsTooLarge: permanent("image dimensions too large"),
  notAnImage: permanent("not an image"),
  undecodable: permanent("image could not be decoded (corrupt or truncated)"),
  tls: permanent("TLS handshake failed"),
  timedOut: transient("timed out"),
  connectionRefused: transient("connection refused"),
  connectionReset: transient("connection reset"),
  dnsFailed: transient("DNS lookup failed"),
  /** No longer recorded (a store outage is waited out, classifyJobError); kept for photos that failed with it before. */
  storage: transient("storing the processed image failed"),
  /** 4xx are the partner's to fix (408 and 429 are the host asking us to come back later); 5xx may pass. */
  httpStatus: (status: number) =>
    new MediaFailure(`HTTP ${status} from image host`, status >= 500 || status === 408 || status === 429),
  network: (code: string) => new MediaFailure(`download failed (${code})`, true),
};

/** Set by the job runner when processing failed for a reason that is not the image's (media-jobs.ts). */
export const INTERNAL_FAILURE_REASON = "internal processing error";

const TRANSIENT_REASONS = new Set([
  Failures.timedOut().reason,
  Failures.connectionRefused().reason,
  Failures.connectionReset().reason,
  Failures.dnsFailed().reason,
  Failures.storage().reason,
  INTERNAL_FAILURE_REASON,
]);

/**
 * Whether a recorded failure reason is one another attempt may fix (the reasons above marked transient): what
 * `admin media retry --all-transient` resets. Such photos failed only after every retry was used up.
 */
export function isTransientReason(reason: string): boolean {
  if (TRANSIENT_REASONS.has(reason)) return true;
  const http = /^HTTP (\d{3}) from image host$/.exec(reason);
  if (http) return Failures.httpStatus(Number(http[1])).transient;
  return /^download failed \(.+\)$/.test(reason);
}

/** A write of a processed variant to our object store failed: always ours, whatever the store answered. */
export class StorageUnavailable extends Error {
  constructor(cause: unknown) {
    super(`the object store did not take a variant: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = "StorageUnavailable";
  }
}

export type JobErrorClass =
  /** The image's (or its host's) problem: recorded; transient ones spend an attempt and are retried. */
  | { side: "image"; failure: MediaFailure }
  /** One of our dependencies is down: wait and go on, no attempt spent. */
  | { side: "ours"; dependency: "storage" | "postgres" }
  /** Neither (a defect): recorded as a transient failure, bounded by the attempts like the image's. */
  | { side: "internal"; failure: MediaFailure };

export function classifyJobError(err: unknown): JobErrorClass {
  if (err instanceof MediaFailure) return { side: "image", failure: err };
  if (err instanceof StorageUnavailable) return { side: "ours", dependency: "storage" };
  if (isDependencyUnavailable(err)) return { side: "ours", dependency: "postgres" };
  return { side: "internal", failure: new MediaFailure(INTERNAL_FAILURE_REASON, true) };
}

/** Whether waiting can help a failed storage write: every failure of the store is ours. */
export const isStorageOutage = (err: unknown): boolean => classifyJobError(err).side === "ours";
/** Whether a failed PostgreSQL statement failed because the server is unreachable (not a defect in the statement). */
export const isDatabaseOutage = (err: unknown): boolean => {
  const c = classifyJobError(err);
  return c.side === "ours" && c.dependency === "postgres";
};
