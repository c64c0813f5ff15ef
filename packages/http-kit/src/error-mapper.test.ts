import { expect, test } from "bun:test";
import { silentLogger } from "@pss/service-kit";
import { mapError } from "./error-mapper.ts";

const pgError = (code: string) => Object.assign(new Error(`write ${code} 127.0.0.1:55432`), { code });

test("a PostgreSQL connection failure becomes 503 'temporarily unavailable' with Retry-After, without driver text", () => {
  for (const code of ["ECONNREFUSED", "CONNECTION_CLOSED", "CONNECT_TIMEOUT", "57P03"]) {
    const mapped = mapError({ code: "UNKNOWN", error: pgError(code), requestId: "r1", logger: silentLogger });
    expect(mapped.status).toBe(503);
    expect(mapped.body.status).toBe("error");
    expect(mapped.body.error).toContain("temporarily unavailable");
    expect(mapped.body.error).not.toContain("55432");
    expect(Number(mapped.headers?.["Retry-After"])).toBeGreaterThan(0);
  }
});

test("a query error that is not about reaching the database stays a 500", () => {
  const mapped = mapError({
    code: "UNKNOWN",
    error: Object.assign(new Error("boom"), { code: "42P01" }),
    requestId: "r2",
    logger: silentLogger,
  });
  expect(mapped.status).toBe(500);
});
