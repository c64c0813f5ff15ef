// GET /media/<name>: the processed image variants the media service stored. Names are content addresses, so
// responses are cacheable forever; anything that is not a well-formed name (including any path) is a 404.
import { resolve, sep } from "node:path";
import { Elysia } from "elysia";
import { isMediaName, MEDIA_CACHE_CONTROL, mediaContentType, mediaRelativePath } from "@pss/contracts";
import { NotFoundError } from "../http/errors.ts";

export function createMediaRoutes(deps: { mediaDir?: string }) {
  const root = deps.mediaDir ? resolve(deps.mediaDir) : null;
  return new Elysia({ name: "media-routes" }).get(
    "/media/:name",
    async ({ params, request }) => {
      const name = params.name;
      if (!root || !isMediaName(name)) throw new NotFoundError();
      const path = resolve(root, mediaRelativePath(name));
      // The name pattern already excludes separators and dots; this keeps the guarantee local.
      if (!path.startsWith(root + sep)) throw new NotFoundError();
      const file = Bun.file(path);
      if (!(await file.exists())) throw new NotFoundError();
      const etag = `"${name.slice(0, 64)}"`;
      const headers = { "cache-control": MEDIA_CACHE_CONTROL, etag, "x-content-type-options": "nosniff" };
      if (request.headers.get("if-none-match") === etag) return new Response(null, { status: 304, headers });
      return new Response(file, { headers: { ...headers, "content-type": mediaContentType(name) } });
    },
    { detail: { summary: "A processed image variant (listing photo or broker avatar)", hide: true } },
  );
}
