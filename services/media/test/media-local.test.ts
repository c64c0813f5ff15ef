// The media path with variants in a local directory (MEDIA_STORAGE=local), including every rule that does not
// depend on storage; media-s3.test.ts runs the storage-dependent part against the S3-compatible server.
import { defineMediaSuite } from "./support/media-suite.ts";

defineMediaSuite("local", { storageIndependent: true });
