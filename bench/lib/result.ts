import type { TargetId } from "./targets.ts";

export interface Row {
  scenario: string;
  figure: number;
  unit: string;
  baseline?: number;
  baselineLabel?: string;
  ratio?: number;
  target: string;
  pass: boolean | null;
  notes?: string;
  /** The target this row measures (bench/lib/targets.ts): its ratio, or its figure when it has none. */
  targetId?: TargetId;
  /** Which part of that target, when several rows measure it ("creates", "updates"). */
  targetPart?: string;
}

export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
