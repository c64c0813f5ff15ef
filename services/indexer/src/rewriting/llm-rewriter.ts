// An OpenAI-compatible chat-completions backend, used only when REWRITER_LLM_URL is configured. A slow, failing
// or odd answer falls back to the deterministic rewrite, so indexing never waits longer than the timeout.
import { rewriteDescription } from "@pss/contracts";
import type { Logger } from "@pss/service-kit";
import type { DescriptionRewriter } from "./description-rewriter.ts";

export interface LlmRewriterOptions {
  /** Base URL of the API, e.g. http://127.0.0.1:11434/v1; /chat/completions is appended. */
  url: string;
  model: string;
  apiKey?: string;
  timeoutMs: number;
  logger: Logger;
}

const INSTRUCTIONS = [
  "You edit descriptions of businesses for sale on a marketplace.",
  "Fix spelling, grammar, whitespace and punctuation; turn ALL-CAPS sentences into sentence case.",
  "Remove every e-mail address, phone number, web address and social media handle: buyers must contact the seller through the marketplace.",
  "Keep every fact and figure and the seller's meaning and tone; add nothing, invent nothing; keep paragraphs.",
  "Answer with the edited description only, no preamble.",
].join(" ");

export function createLlmRewriter(opts: LlmRewriterOptions): DescriptionRewriter {
  const endpoint = `${opts.url.replace(/\/+$/, "")}/chat/completions`;
  const log = opts.logger.child({ component: "llm-rewriter" });

  async function ask(text: string): Promise<string> {
    const res = await fetch(endpoint, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model: opts.model,
        temperature: 0,
        messages: [
          { role: "system", content: INSTRUCTIONS },
          { role: "user", content: text },
        ],
      }),
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
    if (!res.ok) throw new Error(`answered ${res.status}`);
    const body = (await res.json()) as { choices?: { message?: { content?: unknown } }[] };
    const content = body.choices?.[0]?.message?.content;
    if (typeof content !== "string" || content.trim() === "") throw new Error("answer has no text");
    // A rewrite that balloons is no longer the partner's text.
    if (content.length > text.length * 1.5 + 200) throw new Error("answer is much longer than the original");
    return content;
  }

  return {
    name: "llm",
    async rewrite(text) {
      if (text.trim() === "") return rewriteDescription(text);
      try {
        return rewriteDescription(await ask(text));
      } catch (err) {
        log.warn("LLM rewrite failed; using the deterministic rewrite", {
          err: (err as Error).message,
          timeoutMs: opts.timeoutMs,
        });
        return rewriteDescription(text);
      }
    },
  };
}
