// GET /media/<name>: the processed image variants the media service stored (a directory or object storage).
// Names are content addresses, so responses are cacheable forever and a conditional request is answered
// without asking storage at all; anything that is not a well-formed name (including any path) is a 404.
// MEDIA_DELIVERY=api (the default) streams the bytes through the API; MEDIA_DELIVERY=redirect answers 302 to
// a presigned object-storage URL instead (docs/media.md, "Serving variants", says why api is the default).
import { Elysia } from "elysia";
import { isMediaName, MEDIA_CACHE_CONTROL, mediaContentType } from "@pss/contracts";
import type { Logger, MediaStorage } from "@pss/service-kit";
import { NotFoundError, ServiceUnavailableError } from "@pss/http-kit";

export interface MediaRoutesDeps {
  storage?: MediaStorage;
  delivery?: "api" | "redirect";
  /** Lifetime of presigned URLs (redirect delivery). */
  presignSeconds?: number;
  logger?: Logger;
}

export const STORAGE_UNAVAILABLE = "Image storage is temporarily unavailable; please retry shortly";

/** Whether If-None-Match names this entity tag (a list, weak tags and `*` included). */
export function matchesEtag(header: string | null, etag: string): boolean {
  if (!header) return false;
  return header.split(",").some((t) => {
    const tag = t.trim().replace(/^W\//, "");
    return tag === "*" || tag === etag;
  });
}

export function createMediaRoutes(deps: MediaRoutesDeps) {
  const { storage } = deps;
  const presignSeconds = deps.presignSeconds ?? 3600;
  const redirect = deps.delivery === "redirect" && storage?.kind === "s3";
  return new Elysia({ name: "media-routes" }).get(
    "/media/:name",
    async ({ params, request }) => {
      const name = params.name;
      if (!storage || !isMediaName(name)) throw new NotFoundError();
      const etag = `"${name.slice(0, 64)}"`;
      const headers = { "cache-control": MEDIA_CACHE_CONTROL, etag, "x-content-type-options": "nosniff" };
      // The name is the SHA-256 of the bytes: a client holding this tag holds these bytes.
      if (matchesEtag(request.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers });
      if (redirect) {
        const location = storage.presign(name, presignSeconds);
        // The redirect may be reused while the URL it names is valid, with a margin for the client's own fetch.
        const maxAge = Math.max(0, Math.floor(presignSeconds / 2));
        if (location)
          return new Response(null, {
            status: 302,
            headers: { location, "cache-control": `public, max-age=${maxAge}`, "x-content-type-options": "nosniff" },
          });
      }
      let stored: Awaited<ReturnType<typeof storage.read>>;
      try {
        stored = await storage.read(name);
      } catch (err) {
        deps.logger?.warn("image storage unavailable", { name, err: (err as Error).message });
        throw new ServiceUnavailableError(STORAGE_UNAVAILABLE);
      }
      if (!stored) throw new NotFoundError();
      const length = stored.size === null ? {} : { "content-length": String(stored.size) };
      return new Response(stored.body, { headers: { ...headers, ...length, "content-type": mediaContentType(name) } });
    },
    { detail: { summary: "A processed image variant (listing photo or broker avatar)", hide: true } },
  );
}
