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
}

export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
