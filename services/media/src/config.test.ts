import { expect, test } from "bun:test";
import { ConfigError } from "@pss/service-kit";
import { loadConfig } from "./config.ts";

test("media: an unparsable DATABASE_URL is reported without its password", () => {
  let message = "";
  try {
    loadConfig({ DATABASE_URL: "postgres://pss:pg-s3cret@db:notaport/pss", KAFKA_BROKERS: "kafka:9092" });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    message = (err as Error).message;
  }
  expect(message).toContain("DATABASE_URL must be a URL, got 'postgres://pss:***@db:notaport/pss'");
  expect(message).not.toContain("s3cret");
});
