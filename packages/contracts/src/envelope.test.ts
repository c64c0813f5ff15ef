import { describe, expect, test } from "bun:test";
import { Kind, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import * as contracts from "./index.ts";
import { AnyEventEnvelope } from "./envelope.ts";
import { CONTRACT_FORMATS, isUuid, registerFormats } from "./formats.ts";
import { LeadSubmittedPayload } from "./events/lead-events.ts";

const envelope = () => ({
  eventId: crypto.randomUUID(),
  type: "listing.upserted",
  aggregateType: "listing",
  aggregateId: "42",
  version: 3,
  partnerId: "2b9c7d3e-61a4-4f2e-9a55-0c2f1f0f6a11",
  occurredAt: "2026-05-01T12:00:00.000Z",
  payload: { listingId: 42 },
});

describe("event envelopes are read tolerantly", () => {
  registerFormats();

  test("unknown fields in the envelope and in the payload are accepted", () => {
    expect(Value.Check(AnyEventEnvelope, { ...envelope(), traceId: "abc", schemaRevision: 2 })).toBe(true);
    const lead = {
      leadId: crypto.randomUUID(),
      serviceListingId: 1,
      serviceBrokerId: "2",
      officeId: 3,
      organizationId: 4,
      createdAt: "2026-05-01T12:00:00Z",
    };
    expect(Value.Check(LeadSubmittedPayload, { ...lead, channel: "web", utm: { source: "x" } })).toBe(true);
  });

  test("the fields consumers use are still checked", () => {
    expect(Value.Check(AnyEventEnvelope, { ...envelope(), eventId: "not-a-uuid" })).toBe(false);
    expect(Value.Check(AnyEventEnvelope, { ...envelope(), version: 0 })).toBe(false);
    expect(Value.Check(AnyEventEnvelope, { ...envelope(), occurredAt: "yesterday" })).toBe(false);
    const { aggregateId: _, ...withoutId } = envelope();
    expect(Value.Check(AnyEventEnvelope, withoutId)).toBe(false);
  });
});

describe("formats", () => {
  test("uuid accepts any RFC 9562 textual UUID and nothing else", () => {
    expect(isUuid(crypto.randomUUID())).toBe(true);
    expect(isUuid("0190F3A2-7C1B-7D4E-8F00-123456789ABC")).toBe(true);
    for (const bad of [
      "",
      "42",
      "0190f3a2-7c1b-7d4e-8f00-123456789ab",
      "urn:uuid:0190f3a2-7c1b-7d4e-8f00-123456789abc",
      "0190f3a27c1b7d4e8f00123456789abc",
    ])
      expect(isUuid(bad)).toBe(false);
  });

  test("registerFormats registers every format any contract schema names", () => {
    const used = new Set<string>();
    const visit = (node: unknown, seen: Set<unknown>) => {
      if (!node || typeof node !== "object" || seen.has(node)) return;
      seen.add(node);
      if (Kind in (node as TSchema) && typeof (node as TSchema).format === "string")
        used.add((node as TSchema).format as string);
      for (const value of Object.values(node)) visit(value, seen);
    };
    for (const value of Object.values(contracts)) visit(value, new Set());
    expect(used.size).toBeGreaterThan(0);
    expect([...used].filter((f) => !(f in CONTRACT_FORMATS))).toEqual([]);
  });

  test("a fresh TypeBox without Elysia validates an envelope once registerFormats() ran, and not before", async () => {
    // Elysia registers formats as an import side effect; it is not even resolvable from this package, and a
    // separate process starts with an empty format registry.
    const script = `
      import { FormatRegistry } from "@sinclair/typebox";
      import { Value } from "@sinclair/typebox/value";
      import { AnyEventEnvelope, registerFormats } from "@pss/contracts";
      const event = ${JSON.stringify(envelope())};
      const before = { uuidKnown: FormatRegistry.Has("uuid"), valid: Value.Check(AnyEventEnvelope, event) };
      registerFormats();
      const after = { uuidKnown: FormatRegistry.Has("uuid"), valid: Value.Check(AnyEventEnvelope, event) };
      let elysiaResolvable = true;
      try { Bun.resolveSync("elysia", process.cwd()); } catch { elysiaResolvable = false; }
      console.log(JSON.stringify({ before, after, elysiaResolvable }));`;
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
    expect(JSON.parse(out)).toEqual({
      before: { uuidKnown: false, valid: false },
      after: { uuidKnown: true, valid: true },
      elysiaResolvable: false,
    });
  });
});
