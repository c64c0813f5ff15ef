import { describe, expect, test } from "bun:test";
import { redactSecrets, redactUrl } from "./redact.ts";

describe("redactUrl", () => {
  test.each([
    ["postgres://pss:s3cret@db:5432/pss", "postgres://pss:***@db:5432/pss"],
    // Fails to parse: invalid port, or a password holding '@', '/', ':' or a space.
    ["postgres://pss:s3cret@db:notaport/pss", "postgres://pss:***@db:notaport/pss"],
    ["postgres://pss:p@ss/w:rd@db:5432/pss", "postgres://pss:***@db:5432/pss"],
    ["postgres://pss:two words@db/pss", "postgres://pss:***@db/pss"],
    ["redis://:s3cret@redis:6379", "redis://:***@redis:6379"],
    ["http://admin:s3cret@opensearch:9200", "http://admin:***@opensearch:9200"],
    ["https://tok_s3cret@host/x", "https://***@host/x"],
    ["pss:s3cret@db/pss", "pss:***@db/pss"],
    [
      "postgres://db/pss?user=pss&password=s3cret&sslmode=require",
      "postgres://db/pss?user=pss&password=***&sslmode=require",
    ],
  ])("%s is shown as %s", (input, shown) => {
    expect(redactUrl(input)).toBe(shown);
    expect(redactUrl(input)).not.toContain("s3cret");
  });

  test("a URL without credentials is left as it is", () => {
    expect(redactUrl("http://127.0.0.1:9250")).toBe("http://127.0.0.1:9250");
    expect(redactUrl("kafka:9092")).toBe("kafka:9092");
  });
});

describe("redactSecrets", () => {
  test("masks URL passwords, secret parameters, bearer tokens and e-mail addresses inside free text", () => {
    const text =
      "connect failed: postgres://pss:hunter2@db:5432/pss; retry http://h/x?api_key=k3y&x=1 " +
      "with Authorization: Bearer pss_live_AbC123-_xyz for jane.doe@example.com";
    const out = redactSecrets(text);
    expect(out).toBe(
      "connect failed: postgres://pss:***@db:5432/pss; retry http://h/x?api_key=***&x=1 " +
        "with Authorization: Bearer *** for j***@example.com",
    );
  });

  test("leaves ordinary text, and already masked addresses, unchanged", () => {
    for (const text of [
      "listing 42 indexed in 12 ms",
      "to j***@example.com",
      "GET /partner/v1/listings?limit=5",
      "http://127.0.0.1:8080/media/a.webp",
    ]) {
      expect(redactSecrets(text)).toBe(text);
    }
  });

  test("masks the signature and credential of presigned object-storage URLs and secret keys in JSON fields", () => {
    const url =
      "http://127.0.0.1:59000/pss-media/ab/x.webp?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=pss%2F20260101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=88beb5dfea60&X-Amz-SignedHeaders=host";
    expect(redactSecrets(`redirecting to ${url}`)).toBe(
      "redirecting to http://127.0.0.1:59000/pss-media/ab/x.webp?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***&X-Amz-Signature=***&X-Amz-SignedHeaders=host",
    );
    const line = JSON.stringify({
      msg: "s3",
      secretAccessKey: 'wJalr"XUtn',
      S3_SECRET_ACCESS_KEY: "abc",
      sessionToken: "tok",
      bucket: "pss-media",
    });
    const out = redactSecrets(line);
    expect(JSON.parse(out)).toEqual({
      msg: "s3",
      secretAccessKey: "***",
      S3_SECRET_ACCESS_KEY: "***",
      sessionToken: "***",
      bucket: "pss-media",
    });
  });
});
