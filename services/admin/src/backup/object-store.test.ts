import { describe, expect, test } from "bun:test";
import { parseObjectStoreLocation } from "./object-store.ts";

describe("backup locations in an object store", () => {
  test("s3://<bucket>/<path> is a location (a key prefix ending in /); anything else is a directory", () => {
    expect(parseObjectStoreLocation("s3://pss-media/backups/20261128T010000Z")).toEqual({
      bucket: "pss-media",
      prefix: "backups/20261128T010000Z/",
      url: "s3://pss-media/backups/20261128T010000Z",
    });
    expect(parseObjectStoreLocation("s3://pss-backups/nightly/")?.prefix).toBe("nightly/");
    expect(parseObjectStoreLocation("/backup/20261128T010000Z")).toBeNull();
  });

  test("refuses a location without a path, with a bad bucket name or a path that climbs out", () => {
    for (const bad of ["s3://pss-media", "s3://pss-media/", "s3://Bad_Bucket/x", "s3://pss-media/../x", "s3://b/x y"])
      expect(() => parseObjectStoreLocation(bad)).toThrow(/is not a backup location in an object store/);
  });
});
