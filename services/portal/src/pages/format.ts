// Small formatting rules every page shares: times in UTC (the API's and the logs' zone), numbers, masked addresses.
const number = new Intl.NumberFormat("en-US");
export const formatNumber = (n: number) => number.format(n);

/** "2026-11-22 20:30:15 UTC" from an ISO string or a Date; "—" for none. */
export function formatTime(value: string | Date | null | undefined): string {
  if (value === null || value === undefined) return "—";
  const d = typeof value === "string" ? new Date(value) : value;
  if (Number.isNaN(d.getTime())) return String(value);
  return `${d.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

export const formatPercent = (part: number, whole: number) =>
  whole === 0 ? "0%" : `${((100 * part) / whole).toFixed(part === 0 || part === whole ? 0 : 1)}%`;

/** j***@example.com: enough to recognise an address, not to write to it. */
export function maskEmail(email: string | null | undefined): string {
  if (!email) return "—";
  const at = email.lastIndexOf("@");
  if (at <= 0) return "***";
  return `${email[0]}***${email.slice(at)}`;
}

/** An API key as the portal names it: its prefix (what `admin keys list` shows) and ID; never the key. */
export const keyLabel = (prefix: string | null, id: string | null) =>
  id === null ? "—" : prefix ? `${prefix}… (key ${id})` : `key ${id}`;
