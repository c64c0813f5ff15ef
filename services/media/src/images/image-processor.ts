// Turns downloaded bytes into web-ready variants with sharp: first frame only, auto-oriented, metadata stripped,
// sRGB, WebP plus a JPEG fallback. What the bytes are is decided by decoding them, never by Content-Type.
import sharp from "sharp";
import type { Metadata, Sharp } from "sharp";
import { Failures, MediaFailure } from "../failures.ts";

export const PHOTO_WIDTHS = [1600, 800, 400] as const;
export const AVATAR_SIZES = [400, 96] as const;
export const RECOMMENDED_PHOTO_WIDTH = 1200;
export const RECOMMENDED_AVATAR_SIZE = 400;

/** Raster formats we accept; anything else sharp can read (SVG, PDF, ...) is not a photo upload. */
const ACCEPTED_FORMATS = new Set(["jpeg", "png", "webp", "gif", "avif", "heif", "tiff"]);

export type VariantFormat = "webp" | "jpeg";

export interface ProcessedVariant {
  width: number;
  height: number;
  format: VariantFormat;
  bytes: Buffer;
}

export interface ProcessedImage {
  /** The original's size after auto-orientation. */
  width: number;
  height: number;
  warning: string | null;
  variants: ProcessedVariant[];
}

export interface ImageProcessor {
  photo(bytes: Buffer): Promise<ProcessedImage>;
  avatar(bytes: Buffer): Promise<ProcessedImage>;
}

/** Process-wide libvips settings: one thread per operation and no operation cache, so the pool sets parallelism. */
export function configureSharp(threads: number): void {
  sharp.concurrency(threads);
  sharp.cache(false);
}

/** Widths to produce: never upscale, but always at least one variant. */
export function photoWidths(originalWidth: number): number[] {
  const fitting = PHOTO_WIDTHS.filter((w) => w <= originalWidth);
  return fitting.length > 0 ? fitting : [originalWidth];
}

/** Square sizes to produce: never upscale, but always at least one (the largest square the image holds). */
export function avatarSizes(width: number, height: number): number[] {
  const side = Math.min(width, height);
  const fitting = AVATAR_SIZES.filter((s) => s <= side);
  return fitting.length > 0 ? fitting : [side];
}

export function photoWarning(width: number): string | null {
  return width < RECOMMENDED_PHOTO_WIDTH
    ? `image is ${width} px wide; at least ${RECOMMENDED_PHOTO_WIDTH} px is recommended`
    : null;
}

export function avatarWarning(width: number, height: number): string | null {
  return width < RECOMMENDED_AVATAR_SIZE || height < RECOMMENDED_AVATAR_SIZE
    ? `image is ${width}x${height} px; at least ${RECOMMENDED_AVATAR_SIZE}x${RECOMMENDED_AVATAR_SIZE} px is recommended`
    : null;
}

function decodeFailure(err: unknown): MediaFailure {
  if (err instanceof MediaFailure) return err;
  const message = String((err as Error)?.message ?? err);
  if (/pixel limit/i.test(message)) return Failures.dimensionsTooLarge();
  if (/unsupported image format|bad seek|Input buffer is empty/i.test(message)) return Failures.notAnImage();
  return Failures.undecodable();
}

export function createImageProcessor(opts: { maxInputPixels: number }): ImageProcessor {
  const input = (bytes: Buffer) =>
    sharp(bytes, { limitInputPixels: opts.maxInputPixels, pages: 1, animated: false, failOn: "error" });

  /** Reads only the header: refuses non-images and pixel bombs before anything is decoded. */
  async function probe(bytes: Buffer): Promise<{ width: number; height: number }> {
    let meta: Metadata;
    try {
      meta = await sharp(bytes, { limitInputPixels: false, pages: 1 }).metadata();
    } catch (err) {
      throw decodeFailure(err);
    }
    if (!meta.format || !ACCEPTED_FORMATS.has(meta.format) || !meta.width || !meta.height) throw Failures.notAnImage();
    const height = meta.pageHeight ?? meta.height;
    if (meta.width * height > opts.maxInputPixels) throw Failures.dimensionsTooLarge();
    const oriented = (meta.orientation ?? 1) >= 5;
    return oriented ? { width: height, height: meta.width } : { width: meta.width, height };
  }

  /** Decodes and resizes once per size, then encodes both formats from the same pixels. */
  async function encode(pipeline: Sharp): Promise<ProcessedVariant[]> {
    const { data, info } = await pipeline
      .toColourspace("srgb")
      .raw({ depth: "uchar" })
      .toBuffer({ resolveWithObject: true });
    const raw = { raw: { width: info.width, height: info.height, channels: info.channels } };
    const webp = await sharp(data, raw).webp({ quality: 80 }).toBuffer();
    // JPEG has no alpha: transparent areas become white rather than black.
    const jpeg = await sharp(data, raw)
      .flatten({ background: "#ffffff" })
      .jpeg({ quality: 82, progressive: true })
      .toBuffer();
    return [
      { width: info.width, height: info.height, format: "webp", bytes: webp },
      { width: info.width, height: info.height, format: "jpeg", bytes: jpeg },
    ];
  }

  /** One size after another: a job uses one core at a time, so the worker pool alone sets parallelism. */
  async function encodeAll<T>(sizes: T[], pipeline: (size: T) => Sharp): Promise<ProcessedVariant[]> {
    const out: ProcessedVariant[] = [];
    try {
      for (const size of sizes) out.push(...(await encode(pipeline(size))));
    } catch (err) {
      throw decodeFailure(err);
    }
    return out;
  }

  return {
    async photo(bytes) {
      const size = await probe(bytes);
      const variants = await encodeAll(photoWidths(size.width), (width) =>
        input(bytes).rotate().resize({ width, withoutEnlargement: true }),
      );
      return { ...size, warning: photoWarning(size.width), variants };
    },
    async avatar(bytes) {
      const size = await probe(bytes);
      const variants = await encodeAll(avatarSizes(size.width, size.height), (side) =>
        input(bytes)
          .rotate()
          .resize(side, side, { fit: "cover", position: sharp.strategy.attention, withoutEnlargement: true }),
      );
      return { ...size, warning: avatarWarning(size.width, size.height), variants };
    },
  };
}
