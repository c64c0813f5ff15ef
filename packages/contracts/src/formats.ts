// String formats the schemas use. TypeBox keeps formats in one registry shared with Elysia (hence a single
// TypeBox version across the workspace), and a schema with an unregistered format never validates: whoever
// validates calls registerFormats() (idempotent, cheap) rather than relying on Elysia having been imported.
import { FormatRegistry } from "@sinclair/typebox";
import { COUNTRY_CODES } from "./country-codes.ts";
import { isValidExternalId, Limits } from "./http/common.ts";
import { compilePattern, EMAIL_PATTERN, HTTP_URL_PATTERN } from "./http/patterns.ts";
import { codePointLength, registerTextKind } from "./http/text.ts";

const EMAIL = compilePattern(EMAIL_PATTERN);
const HTTP_URL = compilePattern(HTTP_URL_PATTERN);
// ISO 8601 date-time with an explicit offset or Z, e.g. 2024-05-01T12:00:00Z, 2024-05-01T12:00:00.123+02:00.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

export function isEmail(value: string): boolean {
  return value.length <= 2 * 254 && codePointLength(value) <= 254 && EMAIL.test(value);
}

/** The pattern is the whole rule (the OpenAPI document declares it); every match is a URL that parses. */
export function isHttpUrl(value: string): boolean {
  return value.length <= 2 * Limits.url && codePointLength(value) <= Limits.url && HTTP_URL.test(value);
}

export function isDateTime(value: string): boolean {
  if (!DATE_TIME.test(value)) return false;
  // Date.parse rolls 2024-02-30 over to March 1: check the calendar date exists, and stay within year 1..9999.
  const [y, m, d] = value.slice(0, 10).split("-").map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d));
  if (y < 1 || day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d) return false;
  const [hh, mm] = value.slice(11, 16).split(":").map(Number) as [number, number];
  return hh < 24 && mm < 60 && !Number.isNaN(Date.parse(value.replace(/([+-]\d{2})(\d{2})$/, "$1:$2")));
}

// RFC 9562 textual form, any version and variant (event IDs are v4, lead IDs v7).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

export function isCountryCode(value: string): boolean {
  return COUNTRY_CODES.has(value);
}

/** Every format named in packages/contracts (a test checks none is missing). */
export const CONTRACT_FORMATS = {
  email: isEmail,
  "http-url": isHttpUrl,
  "date-time": isDateTime,
  "country-code": isCountryCode,
  uuid: isUuid,
  "external-id": isValidExternalId,
} as const satisfies Record<string, (value: string) => boolean>;

export function registerFormats(): void {
  for (const [name, check] of Object.entries(CONTRACT_FORMATS)) FormatRegistry.Set(name, check);
  registerTextKind();
}
