// Records keep each variant's media key (its content-addressed name), never a URL: the URL is built here, when
// a record is read, from PUBLIC_BASE_URL. So a domain change is a configuration change, not a data migration.
import { isMediaName, mediaUrl } from "./media.ts";

export interface VariantView {
  width: number;
  height: number;
  format: string;
  url: string;
}

interface StoredVariant {
  width: number;
  height: number;
  format: string;
  /** Since migration 0011. */
  key?: string;
  /** Written before migration 0011 (an absolute URL); still read, e.g. from a media instance not yet upgraded. */
  url?: string;
}

export function variantsWithUrls(stored: readonly unknown[] | null | undefined, publicBaseUrl: string): VariantView[] {
  return (stored ?? []).flatMap((raw) => {
    const v = raw as StoredVariant;
    const url =
      typeof v.key === "string" && isMediaName(v.key)
        ? mediaUrl(publicBaseUrl, v.key)
        : typeof v.url === "string"
          ? v.url
          : null;
    return url === null ? [] : [{ width: v.width, height: v.height, format: v.format, url }];
  });
}
