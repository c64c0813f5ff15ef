// Signing in to the portal by e-mail link, sessions and CSRF, against the real API (which invites), PostgreSQL and
// an SMTP sink: the invitation, the same answer for unknown and invited addresses, a link that works once, for 15
// minutes, in the browser that asked; idle and absolute expiry; sign-out here and everywhere; the limits.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { call, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { uniqueName } from "../../../test/support/env.ts";
import { csrfIn, signInAs, signInLinkIn, startPortal, type PortalHarness } from "./support/portal-harness.ts";

let api: ApiHarness;
let portal: PortalHarness;
let partner: Partner;

const address = (name: string) => `${uniqueName(name)}@brokerage.example`.toLowerCase();
const invite = (email: string, body: object = {}, key = partner.apiKey) =>
  call(api.baseUrl, "PUT", `/partner/v1/portal-users/${encodeURIComponent(email)}`, { key, body });

beforeAll(async () => {
  api = await startApi({ relay: false });
  portal = await startPortal();
  partner = await api.createPartner({ leadTracking: true });
}, 60_000);
afterAll(async () => {
  await portal?.stop();
  await api?.stop();
});

describe("inviting", () => {
  test("a person invited through the API gets one invitation e-mail naming the partner and the sign-in page", async () => {
    const email = address("invitee");
    const res = await invite(email.toUpperCase());
    expect(res.status).toBe(201);
    expect(res.body.portalUser).toMatchObject({ email, leadAccess: false, invitation: "pending", lastSignInAt: null });
    const mail = await portal.mailTo(email, /invited you to its partner portal/);
    expect(mail.text).toContain(`${portal.portalUrl}/sign-in?email=${encodeURIComponent(email)}`);
    expect(mail.headers["message-id"]).toMatch(/^<portal-invitation-\d+-1@pss\.test>$/);
    // Sent once: the row says so, a repeat PUT sends nothing more.
    const again = await invite(email);
    expect(again.status).toBe(200);
    expect(again.body.portalUser.invitation).toBe("sent");
    await Bun.sleep(400);
    expect(portal.sink.received.filter((m) => m.envelopeTo.includes(email))).toHaveLength(1);
  });
});

describe("asking for a sign-in link", () => {
  test("an invited and an unknown address get the very same page; only the invited one gets an e-mail", async () => {
    const known = address("known");
    await invite(known);
    const unknown = address("stranger");
    const a = await portal.client().requestLink(known);
    const b = await portal.client().requestLink(unknown);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.text).toBe(b.text);
    expect(a.text).toContain("Check your e-mail");
    const mail = await portal.mailTo(known, /sign-in link/);
    expect(mail.text).toContain("works once, for 15 minutes");
    await Bun.sleep(300);
    expect(portal.sink.received.filter((m) => m.envelopeTo.includes(unknown))).toHaveLength(0);
  });

  test("a form without this browser's token, or posted from another site, is refused with a page", async () => {
    const client = portal.client();
    const token = await client.csrf("/portal/sign-in");
    const forged = await client.post("/portal/sign-in", { email: address("x") });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain("This form was not accepted");
    const crossSite = await client.post(
      "/portal/sign-in",
      { csrf: token, email: address("x") },
      { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
    );
    expect(crossSite.status).toBe(403);
    // Another browser's token does not do either.
    const other = portal.client();
    await other.csrf("/portal/sign-in");
    const stolen = await other.post("/portal/sign-in", { csrf: token, email: address("x") });
    expect(stolen.status).toBe(403);
  });
});

describe("a sign-in link", () => {
  test("signs in the browser that asked, once; a second use and another browser are refused with a clear page", async () => {
    const email = address("once");
    await invite(email);
    const browser = portal.client();
    await browser.requestLink(email);
    const link = signInLinkIn(await portal.mailTo(email, /sign-in link/));

    const elsewhere = await portal.client().get(link);
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.text).toContain("Open this link in the browser where you asked for it");

    const opened = await browser.get(link);
    expect(opened.status).toBe(303);
    expect(opened.location).toBe("/portal/live");
    const cookie = opened.headers.getSetCookie().find((c) => c.startsWith("pss_portal_session="))!;
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Lax");
    expect(cookie).toContain("Path=/portal");
    expect(cookie).not.toContain("Secure");
    const overview = await browser.get("/portal/live");
    expect(overview.status).toBe(200);
    expect(overview.text).toContain("Overview");
    expect(overview.text).toContain(email);

    const again = await browser.get(link);
    expect(again.status).toBe(410);
    expect(again.text).toContain("This sign-in link was already used");
    // The API shows the first sign-in.
    const listed = await call(api.baseUrl, "GET", "/partner/v1/portal-users", { key: partner.apiKey });
    expect(listed.body.portalUsers.find((u: { email: string }) => u.email === email).lastSignInAt).not.toBeNull();
  });

  test("expires after 15 minutes: an expired link is refused with a page that says so and offers a new one", async () => {
    const email = address("late");
    await invite(email);
    const browser = portal.client();
    await browser.requestLink(email);
    const link = signInLinkIn(await portal.mailTo(email, /sign-in link/));
    const [row] = await portal.sql`
      SELECT l.expires_at - l.created_at AS ttl FROM portal_sign_in_links l JOIN portal_users u ON u.id = l.user_id WHERE u.email = ${email}`;
    expect(row!.ttl).toBe("00:15:00");
    await portal.sql`
      UPDATE portal_sign_in_links SET expires_at = now() - interval '1 second'
      WHERE user_id = (SELECT id FROM portal_users WHERE email = ${email})`;
    const late = await browser.get(link);
    expect(late.status).toBe(410);
    expect(late.text).toContain("This sign-in link has expired");
    expect(late.text).toContain('href="/portal/sign-in"');
    expect(browser.cookies.has("pss_portal_session")).toBe(false);
  });

  test("a made-up link is not valid", async () => {
    const res = await portal.client().get(`/portal/sign-in/${"A".repeat(43)}`);
    expect(res.status).toBe(404);
    expect(res.text).toContain("This sign-in link is not valid");
  });
});

describe("sessions", () => {
  test("pages need a session: without one a browser is sent to the sign-in page", async () => {
    for (const path of ["/portal/live", "/portal/test/listings", "/portal/live/requests", "/portal/account"]) {
      const res = await portal.client().get(path);
      expect(res.status).toBe(303);
      expect(res.location).toBe("/portal/sign-in");
    }
  });

  test("end after 8 idle hours and 7 days after signing in, whatever the use", async () => {
    const email = address("idle");
    await invite(email);
    const browser = portal.client();
    await signInAs(portal, browser, email);
    const [s] = await portal.sql`
      SELECT s.expires_at - s.created_at AS absolute FROM portal_sessions s JOIN portal_users u ON u.id = s.user_id WHERE u.email = ${email}`;
    expect(s!.absolute).toBe("7 days");
    await portal.sql`UPDATE portal_sessions SET last_seen_at = now() - interval '8 hours 1 minute'
      WHERE user_id = (SELECT id FROM portal_users WHERE email = ${email})`;
    expect((await browser.get("/portal/live")).status).toBe(303);

    const fresh = portal.client();
    await signInAs(portal, fresh, email);
    expect((await fresh.get("/portal/live")).status).toBe(200);
    await portal.sql`UPDATE portal_sessions SET expires_at = now() - interval '1 second', last_seen_at = now()
      WHERE user_id = (SELECT id FROM portal_users WHERE email = ${email})`;
    expect((await fresh.get("/portal/live")).status).toBe(303);
  });

  test("sign-out needs the form's token; signing out everywhere ends every browser's session", async () => {
    const email = address("everywhere");
    await invite(email);
    const laptop = portal.client();
    const phone = portal.client();
    await signInAs(portal, laptop, email);
    await signInAs(portal, phone, email);

    const forged = await laptop.post("/portal/sign-out-everywhere", {});
    expect(forged.status).toBe(403);
    expect((await phone.get("/portal/live")).status).toBe(200);

    const page = await laptop.get("/portal/account");
    const out = await laptop.post("/portal/sign-out-everywhere", { csrf: csrfIn(page.text)! });
    expect(out.status).toBe(303);
    expect((await laptop.get("/portal/live")).status).toBe(303);
    expect((await phone.get("/portal/live")).status).toBe(303);
  });

  test("removing a person through the API signs them out at once", async () => {
    const email = address("removed");
    await invite(email);
    const browser = portal.client();
    await signInAs(portal, browser, email);
    expect((await browser.get("/portal/live")).status).toBe(200);
    const removed = await call(api.baseUrl, "DELETE", `/partner/v1/portal-users/${encodeURIComponent(email)}`, {
      key: partner.apiKey,
    });
    expect(removed.status).toBe(200);
    expect((await browser.get("/portal/live")).status).toBe(303);
  });
});

describe("cookies behind HTTPS", () => {
  test("carry Secure when the portal's address is https", async () => {
    const secure = await startPortal({ https: true, invitations: false });
    try {
      const res = await secure.client().get("/portal/sign-in");
      expect(res.headers.getSetCookie().find((c) => c.startsWith("pss_portal_browser="))).toContain("Secure");
    } finally {
      await secure.stop();
    }
  });
});

describe("limits on asking for links", () => {
  test("per e-mail and per client address, counted for unknown addresses as for invited ones (429 with Retry-After)", async () => {
    const limited = await startPortal({ limits: { perAddress: 4, perEmail: 2 }, invitations: false });
    try {
      // Each part from an address of its own (the database keeps other runs' requests for the hour).
      const someAddress = () => ({
        "x-forwarded-for": `198.51.100.${Math.floor(Math.random() * 250) + 1}, 10.0.0.${Math.floor(Math.random() * 250) + 1}`,
      });
      const client = limited.client();
      const stranger = address("flooded");
      expect((await client.requestLink(stranger, someAddress())).status).toBe(200);
      expect((await client.requestLink(stranger, someAddress())).status).toBe(200);
      const third = await client.requestLink(stranger, someAddress());
      expect(third.status).toBe(429);
      expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(3000);
      expect(third.text).toContain("Too many sign-in requests");
      // The address's own limit: 4 in all from here (another e-mail each time), whichever addresses.
      const forwardedFor = someAddress();
      const from = limited.client();
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const csrf = await from.csrf("/portal/sign-in");
        statuses.push((await from.post("/portal/sign-in", { csrf, email: address(`many${i}`) }, forwardedFor)).status);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 429]);
    } finally {
      await limited.stop();
    }
  });
});
