// Rewriters turn a partner's description into the one buyers see. The deterministic one is the default and the
// safety net: every other backend's output passes through it.
import { rewriteDescription } from "@pss/contracts";

export interface DescriptionRewriter {
  readonly name: string;
  /** Never throws: a backend that fails falls back to the deterministic rewrite. */
  rewrite(text: string): Promise<string>;
}

export function createDeterministicRewriter(): DescriptionRewriter {
  return { name: "deterministic", rewrite: async (text) => rewriteDescription(text) };
}
