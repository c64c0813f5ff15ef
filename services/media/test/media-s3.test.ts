// The media path with variants in the real S3-compatible server (MEDIA_STORAGE=s3, what `npm start` uses):
// processing, serving through the API, idempotency, avatars and garbage collection.
import { defineMediaSuite } from "./support/media-suite.ts";

defineMediaSuite("s3", { storageIndependent: false });
