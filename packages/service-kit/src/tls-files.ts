// TLS material for the server connections (PostgreSQL, Redis, Kafka, OpenSearch), given as PEM files: a CA bundle
// to trust instead of the system's, and a client certificate and key for mutual TLS. Read once at boot (a missing
// or unreadable file stops the boot with one line), then again whenever the file changes (checked at most once a
// second, when a connection is opened): a CA bundle or client certificate mounted from a Kubernetes Secret and
// rotated in place takes effect on the next connection, without a restart.
import { readFileSync, statSync } from "node:fs";
import type { EnvReader } from "./config.ts";

/** PEM files of one connection; each optional. */
export interface TlsFiles {
  /** Certificate authorities to trust (replaces the system's list). */
  caFile?: string;
  /** Client certificate (mutual TLS), with keyFile. */
  certFile?: string;
  keyFile?: string;
}

/** Node/Bun `tls.connect` options whose fields read their files when read (a getter per file). */
export interface TlsConnectFiles {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
}

const RECHECK_MS = 1000;

/** A file's text, re-read when its size or modification time changed (looked at most once a second). */
export function reloadingFile(path: string, now: () => number = Date.now): () => string {
  let text = readFileSync(path, "utf8");
  let stamp = fileStamp(path);
  let checkedAt = now();
  return () => {
    if (now() - checkedAt < RECHECK_MS) return text;
    checkedAt = now();
    try {
      const current = fileStamp(path);
      if (current !== stamp) {
        text = readFileSync(path, "utf8");
        stamp = current;
      }
    } catch {
      // Mid-rotation (a Secret's symlinks are swapped) or gone for a moment: keep what was read last.
    }
    return text;
  };
}

function fileStamp(path: string): string {
  const s = statSync(path);
  return `${s.size}:${s.mtimeMs}:${s.ino}`;
}

/**
 * `tls.connect` options for the files: `ca`, `cert` and `key` are getters over reloadingFile, so every client that
 * copies its options per connection (postgres, ioredis, kafkajs, the OpenSearch client's agent) sees a rotated file.
 */
export function tlsConnectOptions(files: TlsFiles): TlsConnectFiles {
  const options = {};
  for (const [field, path] of [
    ["ca", files.caFile],
    ["cert", files.certFile],
    ["key", files.keyFile],
  ] as const) {
    if (!path) continue;
    const read = reloadingFile(path);
    Object.defineProperty(options, field, { get: read, enumerable: true });
  }
  return options;
}

/**
 * `<PREFIX>_TLS_CA_FILE`, `<PREFIX>_TLS_CERT_FILE`, `<PREFIX>_TLS_KEY_FILE`: each must name a readable PEM file,
 * and a certificate comes with its key.
 */
export function readTlsFiles(r: EnvReader, prefix: string): TlsFiles {
  const files: TlsFiles = {};
  for (const [field, name] of [
    ["caFile", `${prefix}_TLS_CA_FILE`],
    ["certFile", `${prefix}_TLS_CERT_FILE`],
    ["keyFile", `${prefix}_TLS_KEY_FILE`],
  ] as const) {
    const path = r.optionalString(name);
    if (path === undefined) continue;
    const problem = pemProblem(path);
    if (problem) r.problem(`${name}=${path}: ${problem}`);
    files[field] = path;
  }
  if (Boolean(files.certFile) !== Boolean(files.keyFile))
    r.problem(`${prefix}_TLS_CERT_FILE and ${prefix}_TLS_KEY_FILE go together (a client certificate needs its key)`);
  return files;
}

export function hasTlsFiles(files: TlsFiles): boolean {
  return Boolean(files.caFile || files.certFile || files.keyFile);
}

/** Why a path is not a PEM file we can read, or null. */
function pemProblem(path: string): string | null {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? "no such file" : `cannot be read (${code ?? (err as Error).message})`;
  }
  return text.includes("-----BEGIN ") ? null : "not a PEM file (no -----BEGIN line)";
}
