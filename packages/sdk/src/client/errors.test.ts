import { expect, test } from "bun:test";
import { parseRetryAfter, PssApiError } from "./errors.ts";

test("Retry-After is read as seconds or as an HTTP date", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  expect(parseRetryAfter("7", now)).toBe(7);
  expect(parseRetryAfter(" 0 ", now)).toBe(0);
  expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:30 GMT", now)).toBe(30);
  expect(parseRetryAfter("Wed, 31 Dec 2025 23:00:00 GMT", now)).toBe(0);
  expect(parseRetryAfter("soon", now)).toBeNull();
  expect(parseRetryAfter(null, now)).toBeNull();
});

test("an API error carries status, the API's sentence, every detail and the request id", () => {
  const response = new Response(null, { status: 400, headers: { "x-request-id": "req-1" } });
  const err = PssApiError.from(response, {
    status: "error",
    error: "location.city: must be a string",
    details: [
      { path: "location.city", message: "must be a string" },
      { path: "title", message: "must be at most 200 characters" },
    ],
  });
  expect([err.status, err.error, err.requestId]).toEqual([400, "location.city: must be a string", "req-1"]);
  expect(err.details).toHaveLength(2);
  expect(err.message).toBe("400 location.city: must be a string (request req-1)");
});

test("a body's requestId wins over the header; an answer that is not the error shape still gives a sentence", () => {
  const withBodyId = PssApiError.from(new Response(null, { status: 500, headers: { "x-request-id": "h" } }), {
    status: "error",
    error: "Internal server error",
    requestId: "b",
  });
  expect(withBodyId.requestId).toBe("b");
  const proxy = PssApiError.from(
    new Response(null, { status: 502, headers: { "retry-after": "5" } }),
    "<html>Bad gateway</html>",
  );
  expect([proxy.error, proxy.details, proxy.requestId, proxy.retryAfterSeconds]).toEqual([
    "<html>Bad gateway</html>",
    [],
    null,
    5,
  ]);
  expect(PssApiError.from(new Response(null, { status: 503 }), undefined).error).toBe("HTTP 503");
});
