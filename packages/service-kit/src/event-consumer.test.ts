import { describe, expect, test } from "bun:test";
import { parseEnvelope } from "./event-consumer.ts";

const envelope = (extra: Record<string, unknown> = {}, payload: Record<string, unknown> = { listingId: 7 }) => ({
  eventId: crypto.randomUUID(),
  type: "listing.upserted",
  aggregateType: "listing",
  aggregateId: "7",
  version: 2,
  partnerId: crypto.randomUUID(),
  occurredAt: new Date().toISOString(),
  payload,
  ...extra,
});
const message = (value: unknown) => Buffer.from(JSON.stringify(value));

describe("parseEnvelope reads envelopes tolerantly", () => {
  test("an envelope with fields this consumer does not know is accepted, payload extras included", () => {
    const parsed = parseEnvelope(
      message(envelope({ traceId: "t-1", producer: { version: "2.0" } }, { listingId: 7, newField: [1, 2] })),
    );
    expect(parsed.ok).toBe(true);
    if (parsed.ok === true) expect(parsed.event.payload).toEqual({ listingId: 7, newField: [1, 2] });
  });

  test("what consumers rely on is still refused when missing or malformed", () => {
    expect(parseEnvelope(null)).toEqual({ ok: false, reason: "empty message" });
    expect(parseEnvelope(Buffer.from("{"))).toEqual({ ok: false, reason: "not JSON" });
    expect(parseEnvelope(message(envelope({ eventId: "42" })))).toMatchObject({
      ok: false,
      reason: expect.stringContaining("/eventId"),
    });
    expect(parseEnvelope(message(envelope({ version: "2" })))).toMatchObject({
      ok: false,
      reason: expect.stringContaining("/version"),
    });
  });

  test("works in a process where nothing imported Elysia (no format registered beforehand)", async () => {
    const script = `
      import { FormatRegistry } from "@sinclair/typebox";
      import { parseEnvelope } from "./src/event-consumer.ts";
      const uuidKnownBefore = FormatRegistry.Has("uuid");
      const parsed = parseEnvelope(Buffer.from(${JSON.stringify(JSON.stringify(envelope()))}));
      console.log(JSON.stringify({ uuidKnownBefore, ok: parsed.ok }));`;
    const proc = Bun.spawn([process.execPath, "-e", script], {
      cwd: `${import.meta.dir}/..`,
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = [
      await new Response(proc.stdout).text(),
      await new Response(proc.stderr).text(),
      await proc.exited,
    ];
    expect({ code, err }).toEqual({ code: 0, err: "" });
    expect(JSON.parse(out)).toEqual({ uuidKnownBefore: false, ok: true });
  });
});
