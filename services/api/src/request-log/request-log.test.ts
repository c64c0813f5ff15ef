import { describe, expect, test } from "bun:test";
import { MAX_ERROR_CHARS, storedError } from "./request-log.ts";

describe("the error answer a 4xx row keeps", () => {
  test("is the JSON the partner got, parsed from the answer's text", () => {
    const body = { status: "error", error: "status: must be one of …", details: [{ path: "status", message: "…" }] };
    expect(storedError(JSON.stringify(body))).toEqual(body);
    expect(storedError(body)).toEqual(body);
    expect(storedError(null)).toBeNull();
  });
  test("is cut to its first characters when long, and kept as text when it is not JSON", () => {
    const long = JSON.stringify({ status: "error", error: "x".repeat(MAX_ERROR_CHARS * 2) });
    expect(storedError(long)).toEqual({ truncated: long.slice(0, MAX_ERROR_CHARS) });
    expect(storedError("Bad Request")).toEqual({ text: "Bad Request" });
  });
});
