import { expect, test } from "bun:test";
import { createLogger, maskEmail } from "./logger.ts";

function capture() {
  const lines: string[] = [];
  return { lines, logger: createLogger({ service: "test", level: "debug", write: (l) => lines.push(l) }) };
}

test("log lines never carry a URL password, a bearer token or a full e-mail, wherever they appear", () => {
  const { lines, logger } = capture();
  const err = new Error("connect ECONNREFUSED for postgres://pss:hunter2@db:5432/pss");
  logger.error("redis unavailable at redis://:hunter2@redis:6379", {
    err,
    nested: {
      url: "http://admin:hunter2@opensearch:9200",
      list: ["Bearer pss_live_hunter2hunter2", "ann.buyer@example.com"],
    },
  });
  expect(lines).toHaveLength(1);
  expect(lines[0]).not.toContain("hunter2");
  expect(lines[0]).not.toContain("ann.buyer@");
  const line = JSON.parse(lines[0]!);
  expect(line.msg).toBe("redis unavailable at redis://:***@redis:6379");
  expect(line.err.message).toBe("connect ECONNREFUSED for postgres://pss:***@db:5432/pss");
  expect(line.nested).toEqual({ url: "http://admin:***@opensearch:9200", list: ["Bearer ***", "a***@example.com"] });
});

test("ordinary fields are written unchanged, numbers and booleans included", () => {
  const { lines, logger } = capture();
  logger.info("request", {
    method: "GET",
    path: "/partner/v1/listings",
    status: 200,
    durationMs: 1.5,
    cached: false,
    to: maskEmail("jane@example.com"),
  });
  expect(JSON.parse(lines[0]!)).toMatchObject({
    msg: "request",
    method: "GET",
    path: "/partner/v1/listings",
    status: 200,
    durationMs: 1.5,
    cached: false,
    to: "j***@example.com",
  });
});
