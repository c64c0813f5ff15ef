// MediaStorage on a local (or shared network) filesystem under MEDIA_DIR, laid out as <dir>/<ab>/<name>.
// Writes go to a temporary file and are renamed into place, so a reader never sees half a file.
import { mkdir, readdir, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import { isMediaName, mediaRelativePath } from "@pss/contracts";
import type { MediaStorage, StoredFile } from "./media-storage.ts";

const TEMP_DIR = ".tmp";

export function createLocalMediaStorage(opts: { dir: string }): MediaStorage {
  const root = resolve(opts.dir);
  const pathOf = (name: string) => {
    if (!isMediaName(name)) throw new Error(`not a media name: ${name}`);
    const path = join(root, mediaRelativePath(name));
    // The name pattern already excludes separators and dots; this keeps the guarantee local.
    if (!path.startsWith(root + sep)) throw new Error(`not a media name: ${name}`);
    return path;
  };
  const statOf = async (name: string): Promise<StoredFile | null> => {
    try {
      return { name, modifiedAt: (await stat(pathOf(name))).mtime };
    } catch {
      return null;
    }
  };

  return {
    kind: "local",
    async put(name, bytes) {
      const path = pathOf(name);
      const now = new Date();
      // Already stored: refresh it, so the collector's grace period protects it until our reference commits.
      const refreshed = await utimes(path, now, now).then(
        () => true,
        () => false,
      );
      if (refreshed) return;
      const tempDir = join(root, TEMP_DIR);
      await mkdir(tempDir, { recursive: true });
      await mkdir(dirname(path), { recursive: true });
      const temp = join(tempDir, `${name}.${crypto.randomUUID()}`);
      await writeFile(temp, bytes);
      await rename(temp, path);
    },
    exists: async (name) => (await statOf(name)) !== null,
    async delete(name) {
      await rm(pathOf(name), { force: true });
    },
    stat: statOf,
    async read(name) {
      const file = Bun.file(pathOf(name));
      return (await file.exists()) ? { body: file, size: file.size } : null;
    },
    presign: () => null,
    async check() {
      await mkdir(root, { recursive: true });
      if (!(await stat(root)).isDirectory()) throw new Error(`${root} is not a directory`);
    },
    async *list() {
      let shards: string[];
      try {
        shards = await readdir(root);
      } catch {
        return;
      }
      for (const shard of shards) {
        if (!/^[0-9a-f]{2}$/.test(shard)) continue;
        for (const name of await readdir(join(root, shard)).catch(() => [] as string[])) {
          if (!isMediaName(name)) continue;
          const found = await statOf(name);
          if (found) yield found;
        }
      }
    },
    async removeAbandonedWrites(olderThan) {
      let removed = 0;
      const tempDir = join(root, TEMP_DIR);
      for (const file of await readdir(tempDir).catch(() => [] as string[])) {
        const info = await stat(join(tempDir, file)).catch(() => null);
        if (info && info.mtime < olderThan) {
          await rm(join(tempDir, file), { force: true });
          removed++;
        }
      }
      return removed;
    },
  };
}
