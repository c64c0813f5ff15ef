import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rewriteDescription } from "@pss/contracts";
import { silentLogger } from "@pss/service-kit";
import { uniqueName } from "../../../test/support/env.ts";
import { sample, startApi, type ApiHarness } from "../../api/test/support/harness.ts";
import { createLlmRewriter } from "../src/rewriting/llm-rewriter.ts";
import {
  deleteSearchIndex,
  indexedState,
  rawDocument,
  startIndexer,
  type IndexerHarness,
} from "./support/indexer-harness.ts";

// A real HTTP server on loopback that answers like an OpenAI-compatible chat-completions endpoint.
type Mode = "ok" | "slow" | "error" | "empty";
let mode: Mode = "ok";
const requests: { path: string; authorization: string | null; body: any }[] = [];
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const body = (await req.json()) as any;
    requests.push({ path: new URL(req.url).pathname, authorization: req.headers.get("authorization"), body });
    if (mode === "slow") await Bun.sleep(3000);
    if (mode === "error") return new Response("overloaded", { status: 503 });
    const content =
      mode === "empty" ? "" : `Polished: ${body.messages[1].content.replace(/\s+/g, " ")} Call 512-555-0100.`;
    return Response.json({
      id: "x",
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    });
  },
});
const url = `http://127.0.0.1:${server.port}/v1`;
afterAll(() => server.stop(true));

const rewriter = (timeoutMs = 1000) =>
  createLlmRewriter({ url, model: "tiny-editor", apiKey: "sk-test", timeoutMs, logger: silentLogger });

describe("the LLM rewriter", () => {
  test("sends the description to /chat/completions with the model and key, and returns the answer without contact details", async () => {
    mode = "ok";
    requests.length = 0;
    const out = await rewriter().rewrite("Nice   bakery. Email me at baker@example.com");
    expect(out).toBe("Polished: Nice bakery.");
    expect(requests).toHaveLength(1);
    expect(requests[0]!.path).toBe("/v1/chat/completions");
    expect(requests[0]!.authorization).toBe("Bearer sk-test");
    expect(requests[0]!.body.model).toBe("tiny-editor");
    expect(requests[0]!.body.messages[1]).toEqual({
      role: "user",
      content: "Nice   bakery. Email me at baker@example.com",
    });
  });

  test("the deterministic pass runs on the answer: no contact detail survives either way", async () => {
    mode = "ok";
    const out = await rewriter().rewrite("Quiet cafe.");
    expect(out).toBe("Polished: Quiet cafe.");
    expect(out).not.toContain("555");
  });

  test("a slow endpoint hits the timeout and the deterministic rewrite is used", async () => {
    mode = "slow";
    const text = "BIG SALE!!! Call 512-555-0100.";
    const started = performance.now();
    const out = await rewriter(200).rewrite(text);
    expect(performance.now() - started).toBeLessThan(1500);
    expect(out).toBe(rewriteDescription(text));
    expect(out).toBe("Big sale!");
  });

  test("an error answer or an empty answer falls back to the deterministic rewrite", async () => {
    for (const m of ["error", "empty"] as const) {
      mode = m;
      expect(await rewriter().rewrite("HELLO THERE BUYERS. Visit www.shop.example.com")).toBe("Hello there buyers.");
    }
  });
});

describe("the indexer with the LLM backend", () => {
  let api: ApiHarness;
  let idx: IndexerHarness;
  beforeAll(async () => {
    idx = await startIndexer({ rewriter: rewriter(2000) });
    api = await startApi({ searchAlias: idx.alias });
  });
  afterAll(async () => {
    await idx.stop();
    await api.stop();
    await deleteSearchIndex(idx.alias);
  });

  test("stores and indexes the LLM's rewrite; the partner's original is kept", async () => {
    mode = "ok";
    const partner = await api.createPartner();
    const broker = uniqueName("broker");
    await partner.put(`/partner/v1/brokers/${broker}`, sample.broker());
    const externalId = uniqueName("listing");
    const original = "Family diner,  40 seats.";
    const { body } = await partner.put(
      `/partner/v1/listings/${externalId}`,
      sample.listing(broker, { description: original }),
    );
    await indexedState(api.sql, body.serviceListingId);
    const readBack = (await partner.get(`/partner/v1/listings/${externalId}`)).body.listing;
    expect(readBack.description).toBe(original);
    expect(readBack.descriptionOptimized).toBe("Polished: Family diner, 40 seats.");
    expect((await rawDocument(idx.opensearch, idx.alias, body.serviceListingId))!.description).toBe(
      "Polished: Family diner, 40 seats.",
    );
  });
});
