import { expect, test } from "bun:test";
import { isCountryCode, isDateTime, isEmail, isHttpUrl } from "./formats.ts";

test("date-times need a time zone and a real calendar date", () => {
  for (const ok of [
    "2024-05-01T12:00:00Z",
    "2024-05-01T12:00:00.123+02:00",
    "2024-02-29T00:00:00Z",
    "2024-05-01T12:00Z",
    "2024-05-01T12:00:00-0500",
  ])
    expect(isDateTime(ok)).toBe(true);
  for (const bad of [
    "2024-05-01T12:00:00",
    "2024-05-01",
    "2024-02-30T00:00:00Z",
    "2023-02-29T00:00:00Z",
    "0000-01-01T00:00:00Z",
    "2024-13-01T00:00:00Z",
    "2024-05-01T25:00:00Z",
    "yesterday",
  ])
    expect(isDateTime(bad)).toBe(false);
});

test("e-mail, URL and country code formats", () => {
  expect(isEmail("jane.doe+crm@example.co.uk")).toBe(true);
  for (const bad of ["jane", "jane@", "@example.com", "jane@example", "jane doe@example.com"])
    expect(isEmail(bad)).toBe(false);
  expect(isHttpUrl("https://images.example.com/a.jpg?x=1")).toBe(true);
  for (const bad of ["ftp://x.example.com/a", "images/a.jpg", "https://", "javascript:alert(1)"])
    expect(isHttpUrl(bad)).toBe(false);
  expect(isCountryCode("US")).toBe(true);
  for (const bad of ["us", "USA", "XX", "UK"]) expect(isCountryCode(bad)).toBe(false);
});
