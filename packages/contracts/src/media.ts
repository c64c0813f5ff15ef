// Stored media files: how they are named and laid out, shared by the media service (writer) and the API (reader).

/** Content-addressed: SHA-256 of the file's bytes, then the format's extension. */
export const MEDIA_NAME_PATTERN = /^[0-9a-f]{64}\.(webp|jpg)$/;

export const MEDIA_CONTENT_TYPES = { webp: "image/webp", jpg: "image/jpeg" } as const;

/** A name's bytes never change, so caches may keep it forever. */
export const MEDIA_CACHE_CONTROL = "public, max-age=31536000, immutable";

export function isMediaName(name: string): boolean {
  return MEDIA_NAME_PATTERN.test(name);
}

/** Path below the media directory; two-character fan-out keeps directories small. Only for valid names. */
export function mediaRelativePath(name: string): string {
  return `${name.slice(0, 2)}/${name}`;
}

export function mediaContentType(name: string): string {
  return name.endsWith(".webp") ? MEDIA_CONTENT_TYPES.webp : MEDIA_CONTENT_TYPES.jpg;
}

/** Public address of a stored file. */
export function mediaUrl(publicBaseUrl: string, name: string): string {
  return `${publicBaseUrl.replace(/\/+$/, "")}/media/${name}`;
}
