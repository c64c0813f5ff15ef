import { expect, test } from "bun:test";
import { ConfigError } from "@pss/service-kit";
import { loadConfig } from "./config.ts";

test("indexer: unparsable DATABASE_URL, OPENSEARCH_URL and REWRITER_LLM_URL are reported without their secrets", () => {
  let message = "";
  try {
    loadConfig({
      DATABASE_URL: "postgres://pss:pg-s3cret@db:notaport/pss",
      OPENSEARCH_URL: "http://admin:os-s3cret@open search:9200",
      REWRITER_LLM_URL: "https://llm:llm-s3cret@llm host/v1?api_key=key-s3cret",
      REWRITER_LLM_MODEL: "m",
      KAFKA_BROKERS: "kafka:9092",
    });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    message = (err as Error).message;
  }
  expect(message).toContain("DATABASE_URL must be a URL, got 'postgres://pss:***@db:notaport/pss'");
  expect(message).toContain("OPENSEARCH_URL must be a URL, got 'http://admin:***@open search:9200'");
  expect(message).toContain("REWRITER_LLM_URL must be a URL, got 'https://llm:***@llm host/v1?api_key=***'");
  expect(message).not.toContain("s3cret");
});
