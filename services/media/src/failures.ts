// Why an image could not be processed, in words a partner can act on. Transient ones are retried (bounded).

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
  storage: transient("storing the processed image failed"),
  /** 4xx are the partner's to fix (408 and 429 are the host asking us to come back later); 5xx may pass. */
  httpStatus: (status: number) => new MediaFailure(`HTTP ${status} from image host`, status >= 500 || status === 408 || status === 429),
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
