// Our signatures checked by the reference implementation partners use (the standardwebhooks npm package).
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { signatureOf, signedHeaders } from "./signing.ts";

const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;
const body = JSON.stringify({
  type: "ping",
  timestamp: "2024-05-01T12:00:00.000Z",
  data: { endpointId: "crm", version: 1 },
});

describe("signatures", () => {
  test("standardwebhooks verifies a delivery we signed", () => {
    const secret = newSecret();
    const now = Math.floor(Date.now() / 1000);
    const headers = signedHeaders([secret], "0190f4f2-6c1e-7000-8000-000000000001", now, body);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  test("we sign exactly as the reference implementation does", () => {
    const secret = newSecret();
    const at = new Date("2024-05-01T12:00:00Z");
    expect(signatureOf(secret, "msg_1", at.getTime() / 1000, body)).toBe(new Webhook(secret).sign("msg_1", at, body));
  });

  test("during a rotation both secrets verify; a third one, a changed body or another id does not", () => {
    const [current, previous, stranger] = [newSecret(), newSecret(), newSecret()];
    const now = Math.floor(Date.now() / 1000);
    const headers = { ...signedHeaders([current, previous], "d-1", now, body) };
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(new Webhook(current).verify(body, headers)).toBeTruthy();
    expect(new Webhook(previous).verify(body, headers)).toBeTruthy();
    expect(() => new Webhook(stranger).verify(body, headers)).toThrow();
    expect(() => new Webhook(current).verify(body.replace("crm", "crn"), headers)).toThrow();
    expect(() => new Webhook(current).verify(body, { ...headers, "webhook-id": "d-2" })).toThrow();
  });
});
