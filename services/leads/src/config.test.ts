import { describe, expect, test } from "bun:test";
import { ConfigError } from "@pss/service-kit";
import { loadConfig } from "./config.ts";

const base = { DATABASE_URL: "postgres://u:p@127.0.0.1:5432/db", KAFKA_BROKERS: "127.0.0.1:9092" };

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error("expected a ConfigError");
}

describe("leads config", () => {
  test("without SMTP_HOST forwarding is off and the rest has defaults", () => {
    const c = loadConfig(base);
    expect(c.smtp).toBeNull();
    expect(c.publicBaseUrl).toBe("http://127.0.0.1:8080");
    expect(c.groupPrefix).toBe("pss-leads");
    expect(c.delivery).toEqual({ maxAttempts: 8, retryBaseMs: 30_000, claimTimeoutMs: 300_000 });
    expect(loadConfig({ ...base, LEAD_DELIVERY_CLAIM_TIMEOUT_SECONDS: "20" }).delivery.claimTimeoutMs).toBe(20_000);
  });

  test("SMTP settings: port follows SMTP_SECURE, the Message-ID domain comes from the sender", () => {
    const c = loadConfig({
      ...base,
      SMTP_HOST: "smtp.example.com",
      SMTP_FROM: "Leads <leads@market.example>",
      SMTP_USER: "u",
      SMTP_PASSWORD: "p",
      PUBLIC_BASE_URL: "https://market.example/",
    });
    expect(c.smtp).toEqual({
      host: "smtp.example.com",
      port: 587,
      secure: false,
      user: "u",
      password: "p",
      from: "Leads <leads@market.example>",
      fromDomain: "market.example",
    });
    expect(c.publicBaseUrl).toBe("https://market.example");
    expect(loadConfig({ ...base, SMTP_HOST: "h", SMTP_FROM: "a@b.example", SMTP_SECURE: "true" }).smtp!.port).toBe(465);
  });

  test("every problem is reported at once", () => {
    const p = problems({ ...base, SMTP_HOST: "h", SMTP_USER: "u", SMTP_PORT: "99999", KAFKA_BROKERS: "" });
    expect(p).toContain(
      "SMTP_FROM is required when SMTP_HOST is set (the sender of every e-mail: lead forwarding, portal sign-in links)",
    );
    expect(p).toContain("SMTP_PASSWORD is required when SMTP_USER is set");
    expect(p.some((m) => m.startsWith("SMTP_PORT"))).toBe(true);
    expect(p).toContain("KAFKA_BROKERS is required");
    expect(problems({ ...base, SMTP_HOST: "h", SMTP_FROM: "not an address" })[0]).toContain("SMTP_FROM must be");
  });
});

test("leads: an unparsable DATABASE_URL is reported without its password", () => {
  const found = problems({ ...base, DATABASE_URL: "postgres://pss:pg-s3cret@db:notaport/pss" });
  expect(found).toContain("DATABASE_URL must be a URL, got 'postgres://pss:***@db:notaport/pss'");
  expect(found.join("\n")).not.toContain("s3cret");
});
