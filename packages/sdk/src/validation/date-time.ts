// The API's date-time rule (packages/contracts/src/formats.ts on the server): ISO 8601 with a time zone,
// seconds optional, "t"/"z" in either case, offsets with or without a colon. Broader than RFC 3339's
// date-time, which is why the OpenAPI document's `format: date-time` is checked with this function:
// the SDK must never refuse what the API accepts. A unit test compares the two on many samples.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

export function isDateTime(value: string): boolean {
  if (!DATE_TIME.test(value)) return false;
  // Date.parse rolls 2024-02-30 over to March 1: check the calendar date exists, and stay within year 1..9999.
  const [y, m, d] = value.slice(0, 10).split("-").map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d));
  if (y < 1 || day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d) return false;
  const [hh, mm] = value.slice(11, 16).split(":").map(Number) as [number, number];
  return hh < 24 && mm < 60 && !Number.isNaN(Date.parse(value.replace(/([+-]\d{2})(\d{2})$/, "$1:$2")));
}
