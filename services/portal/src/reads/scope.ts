import type { RecordMode } from "@pss/contracts";

/** Whose data a page reads: the signed-in person's partner, one mode, and whether lead figures are in it. */
export interface PortalScope {
  partnerId: string;
  mode: RecordMode;
  leadAccess: boolean;
}

/** The UTC days from `days - 1` days ago to today, oldest first (YYYY-MM-DD). */
export function lastDays(days: number, now = Date.now()): string[] {
  const today = Math.floor(now / 86_400_000);
  return Array.from({ length: days }, (_, i) =>
    new Date((today - days + 1 + i) * 86_400_000).toISOString().slice(0, 10),
  );
}
