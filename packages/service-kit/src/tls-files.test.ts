import { expect, test } from "bun:test";
import { mkdtempSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { reloadingFile, tlsConnectOptions } from "./tls-files.ts";

const dir = mkdtempSync(join(tmpdir(), "pss-tls-files-"));

test("a rotated file is read again once a second has passed; a file gone mid-rotation keeps the last text", () => {
  const path = join(dir, "ca.pem");
  writeFileSync(path, "first");
  let now = 0;
  const read = reloadingFile(path, () => now);
  expect(read()).toBe("first");
  // Swapped in place, the way a Kubernetes Secret volume swaps its files.
  writeFileSync(join(dir, "next"), "second, longer");
  renameSync(join(dir, "next"), path);
  expect(read()).toBe("first");
  now = 1500;
  expect(read()).toBe("second, longer");
  renameSync(path, join(dir, "away"));
  now = 3000;
  expect(read()).toBe("second, longer");
});

test("TLS options read their files when a client reads them, and only the files given", () => {
  const ca = join(dir, "options-ca.pem");
  writeFileSync(ca, "ca text");
  const options = tlsConnectOptions({ caFile: ca });
  expect(Object.keys(options)).toEqual(["ca"]);
  // What the clients do per connection: copy the options.
  expect({ ...options }).toEqual({ ca: "ca text" });
  expect(Object.assign({}, options).ca).toBe("ca text");
});
