import { describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { signWebhook, verifyWebhook, WebhookVerificationError } from "./verify-webhook.ts";

// Secrets as the service issues them: whsec_ + base64 of random bytes.
const SECRET = `whsec_${Buffer.from("0123456789abcdef0123456789abcdef").toString("base64")}`;
const OLD_SECRET = `whsec_${Buffer.from("fedcba9876543210fedcba9876543210").toString("base64")}`;
const BODY = JSON.stringify({ type: "listing.published", data: { externalListingId: "L-1", serviceListingId: 42 } });
const NOW = new Date("2026-03-01T12:00:00Z");
const TS = Math.floor(NOW.getTime() / 1000);

function delivery(signature: string, overrides: Record<string, string> = {}) {
  return { "webhook-id": "msg_1", "webhook-timestamp": String(TS), "webhook-signature": signature, ...overrides };
}

describe("verifyWebhook", () => {
  test("accepts what the reference implementation (standardwebhooks) signs, and returns the payload", () => {
    const signature = new Webhook(SECRET).sign("msg_1", NOW, BODY);
    const verified = verifyWebhook(SECRET, delivery(signature), BODY, { now: NOW });
    expect(verified.id).toBe("msg_1");
    expect(verified.timestamp).toEqual(NOW);
    expect(verified.payload).toEqual(JSON.parse(BODY));
  });

  test("what signWebhook signs, the reference implementation verifies", () => {
    const signature = signWebhook(SECRET, "msg_1", TS, BODY);
    const wh = new Webhook(SECRET);
    // The reference checks the timestamp against the real clock: sign with now.
    const now = Math.floor(Date.now() / 1000);
    const fresh = signWebhook(SECRET, "msg_1", now, BODY);
    expect(
      wh.verify(BODY, { "webhook-id": "msg_1", "webhook-timestamp": String(now), "webhook-signature": fresh }),
    ).toEqual(JSON.parse(BODY));
    expect(signature).toBe(new Webhook(SECRET).sign("msg_1", NOW, BODY));
  });

  test("during a rotation the delivery carries two signatures; either secret verifies it", () => {
    const both = `${signWebhook(OLD_SECRET, "msg_1", TS, BODY)} ${signWebhook(SECRET, "msg_1", TS, BODY)}`;
    expect(verifyWebhook(SECRET, delivery(both), BODY, { now: NOW }).id).toBe("msg_1");
    expect(verifyWebhook(OLD_SECRET, delivery(both), BODY, { now: NOW }).id).toBe("msg_1");
    // A receiver rotating its own configuration may hold both secrets.
    expect(
      verifyWebhook([OLD_SECRET, SECRET], delivery(signWebhook(SECRET, "msg_1", TS, BODY)), BODY, { now: NOW }).id,
    ).toBe("msg_1");
  });

  test("the raw bytes verify the same as the text", () => {
    const signature = signWebhook(SECRET, "msg_1", TS, BODY);
    expect(
      verifyWebhook(SECRET, new Headers(delivery(signature)), new TextEncoder().encode(BODY), { now: NOW }).payload,
    ).toEqual(JSON.parse(BODY));
  });

  test("a changed body, another id, another timestamp or the wrong secret fail", () => {
    const signature = signWebhook(SECRET, "msg_1", TS, BODY);
    const fails = (fn: () => unknown, message: string) => {
      const err = (() => {
        try {
          fn();
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(WebhookVerificationError);
      expect((err as Error).message).toContain(message);
    };
    fails(
      () => verifyWebhook(SECRET, delivery(signature), BODY.replace("42", "43"), { now: NOW }),
      "no webhook-signature matches",
    );
    fails(
      () => verifyWebhook(SECRET, delivery(signature, { "webhook-id": "msg_2" }), BODY, { now: NOW }),
      "no webhook-signature matches",
    );
    fails(
      () => verifyWebhook(SECRET, delivery(signature, { "webhook-timestamp": String(TS + 1) }), BODY, { now: NOW }),
      "no webhook-signature matches",
    );
    fails(() => verifyWebhook(OLD_SECRET, delivery(signature), BODY, { now: NOW }), "no webhook-signature matches");
    fails(
      () => verifyWebhook(SECRET, delivery(`v2,${signature.slice(3)}`), BODY, { now: NOW }),
      "no webhook-signature matches",
    );
  });

  test("timestamps outside the tolerance fail (replays), either way", () => {
    const signature = signWebhook(SECRET, "msg_1", TS, BODY);
    expect(() => verifyWebhook(SECRET, delivery(signature), BODY, { now: new Date(NOW.getTime() + 301_000) })).toThrow(
      "more than 300 s old",
    );
    expect(() => verifyWebhook(SECRET, delivery(signature), BODY, { now: new Date(NOW.getTime() - 301_000) })).toThrow(
      "in the future",
    );
    expect(
      verifyWebhook(SECRET, delivery(signature), BODY, {
        now: new Date(NOW.getTime() + 3_600_000),
        toleranceSeconds: 7200,
      }).id,
    ).toBe("msg_1");
  });

  test("missing or malformed headers are named", () => {
    expect(() => verifyWebhook(SECRET, {}, BODY, { now: NOW })).toThrow("missing webhook-id header");
    expect(() =>
      verifyWebhook(SECRET, { "Webhook-Id": "m", "webhook-timestamp": "x", "webhook-signature": "v1,a" }, BODY, {
        now: NOW,
      }),
    ).toThrow("not a number of seconds");
    expect(() => verifyWebhook(SECRET, { "webhook-id": "m", "webhook-signature": "v1,a" }, BODY, { now: NOW })).toThrow(
      "missing webhook-timestamp",
    );
  });
});
