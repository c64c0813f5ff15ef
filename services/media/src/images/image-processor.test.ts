import { describe, expect, test } from "bun:test";
import sharp from "sharp";
import { MediaFailure } from "../failures.ts";
import { avatarSizes, avatarWarning, createImageProcessor, photoWarning, photoWidths } from "./image-processor.ts";

describe("sizes", () => {
  test("photo widths never upscale, but there is always at least one", () => {
    expect(photoWidths(4000)).toEqual([1600, 800, 400]);
    expect(photoWidths(1600)).toEqual([1600, 800, 400]);
    expect(photoWidths(1599)).toEqual([800, 400]);
    expect(photoWidths(400)).toEqual([400]);
    expect(photoWidths(120)).toEqual([120]);
  });

  test("avatar squares never upscale, but there is always at least one", () => {
    expect(avatarSizes(1000, 800)).toEqual([400, 96]);
    expect(avatarSizes(300, 900)).toEqual([96]);
    expect(avatarSizes(50, 80)).toEqual([50]);
  });

  test("warnings name the size found and the size recommended", () => {
    expect(photoWarning(1200)).toBeNull();
    expect(photoWarning(800)).toBe("image is 800 px wide; at least 1200 px is recommended");
    expect(avatarWarning(400, 400)).toBeNull();
    expect(avatarWarning(500, 399)).toBe("image is 500x399 px; at least 400x400 px is recommended");
  });
});

describe("content decides, not the name or header", () => {
  const processor = createImageProcessor({ maxInputPixels: 1_000_000 });
  const reason = (p: Promise<unknown>) =>
    p.then(
      () => "processed",
      (err) => (err instanceof MediaFailure ? err.reason : String(err)),
    );

  test("text, an empty body and vector drawings are not images; a broken file with an image signature is undecodable", async () => {
    expect(await reason(processor.photo(Buffer.from("just some text, served as image/jpeg")))).toBe("not an image");
    expect(await reason(processor.photo(Buffer.alloc(0)))).toBe("not an image");
    expect(await reason(processor.photo(Buffer.from("GIF89a and then garbage")))).toBe(
      "image could not be decoded (corrupt or truncated)",
    );
    expect(
      await reason(
        processor.photo(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="2000" height="1000"/>')),
      ),
    ).toBe("not an image");
  });

  test("more pixels than the limit is refused before decoding", async () => {
    const big = await sharp({ create: { width: 1100, height: 1000, channels: 3, background: "#808080" } })
      .png()
      .toBuffer();
    expect(await reason(processor.photo(big))).toBe("image dimensions too large");
  });

  test("a truncated image is reported as undecodable", async () => {
    const jpeg = await sharp({ create: { width: 600, height: 400, channels: 3, background: "#336699" } })
      .jpeg()
      .toBuffer();
    expect(await reason(processor.photo(jpeg.subarray(0, Math.floor(jpeg.length / 2))))).toBe(
      "image could not be decoded (corrupt or truncated)",
    );
  });

  test("only the first frame of an animation is used", async () => {
    const frame = (colour: string) =>
      sharp({ create: { width: 500, height: 300, channels: 4, background: colour } })
        .png()
        .toBuffer();
    const gif = await sharp([await frame("#ff0000"), await frame("#00ff00"), await frame("#0000ff")], {
      join: { animated: true },
    })
      .gif()
      .toBuffer();
    expect((await sharp(gif).metadata()).pages).toBe(3);
    const result = await processor.photo(gif);
    expect([result.width, result.height]).toEqual([500, 300]);
    for (const v of result.variants) {
      const { data, info } = await sharp(v.bytes).raw().toBuffer({ resolveWithObject: true });
      expect([info.height, (await sharp(v.bytes).metadata()).pages ?? 1]).toEqual([
        Math.round((v.width * 300) / 500),
        1,
      ]);
      expect([data[0]! > 200, data[1]! < 50]).toEqual([true, true]); // red: the first frame
    }
  });

  test("transparency becomes white in the JPEG fallback and stays in the WebP", async () => {
    const png = await sharp({
      create: { width: 400, height: 300, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } },
    })
      .png()
      .toBuffer();
    const result = await processor.photo(png);
    const jpeg = result.variants.find((v) => v.format === "jpeg")!;
    const webp = result.variants.find((v) => v.format === "webp")!;
    const { data } = await sharp(jpeg.bytes).raw().toBuffer({ resolveWithObject: true });
    expect(data[0]).toBeGreaterThan(250);
    expect((await sharp(webp.bytes).metadata()).hasAlpha).toBe(true);
  });
});
