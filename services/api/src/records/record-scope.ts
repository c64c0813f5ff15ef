// Whose records a request reads and writes: a partner's live records or its test records (docs/sandbox.md).
// Every partner read and write is keyed by both, so neither mode ever sees the other's records.
import type { RecordMode } from "@pss/contracts";
import type { EventTrace } from "@pss/service-kit";

export interface RecordScope {
  partnerId: string;
  mode: RecordMode;
}

/** Who made a change, kept in the change history. */
export interface WriteOrigin {
  /** api_keys.id of the key that wrote it. */
  keyId: string | null;
  requestId: string | null;
}

export const NO_ORIGIN: WriteOrigin = { keyId: null, requestId: null };

/** Who writes (`origin`, kept in the change history) and the request's ID and traceparent (stored with the events). */
export interface WriteSource {
  origin: WriteOrigin;
  trace?: EventTrace;
}
