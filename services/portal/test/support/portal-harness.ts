// The real portal in-process on a free port, against the test PostgreSQL and an SMTP sink on loopback, with a
// browser-like client for the HTTP tests: a cookie jar, the forms' CSRF tokens, and the sign-in by e-mail link.
import postgres from "postgres";
import { createLogger, disabledTracing, serveTraced, silentLogger, type Logger, type Tracing } from "@pss/service-kit";
import { createSmtpTransport } from "@pss/service-kit/smtp";
import { createPreviewLinks, parseTrustedProxies } from "@pss/http-kit";
import { startSmtpSink, type ReceivedMail, type SmtpSink } from "../../../leads/test/support/smtp-sink.ts";
import { testUrls, testWebhookSecrets, uniqueName } from "../../../../test/support/env.ts";
import { call } from "../../../api/test/support/harness.ts";
import { freePort } from "../../../../test/support/ports.ts";
import { createPortalApp } from "../../src/app.ts";
import { createInvitationSender } from "../../src/auth/invitations.ts";
import { createPortalMailer } from "../../src/auth/mailer.ts";
import { createSessions, type Sessions } from "../../src/auth/sessions.ts";
import { createSignIn, type SignIn } from "../../src/auth/sign-in.ts";

export interface PortalHarness {
  /** http://127.0.0.1:<port>: the portal's pages are under /portal. */
  origin: string;
  portalUrl: string;
  sql: postgres.Sql;
  sink: SmtpSink;
  signIn: SignIn;
  sessions: Sessions;
  /** A new browser-like client (its own cookies). */
  client(): PortalClient;
  /** The newest mail to `to` whose subject matches, waited for. */
  mailTo(to: string, subject: RegExp, timeoutMs?: number): Promise<ReceivedMail>;
  stop(): Promise<void>;
}

export interface PortalOptions {
  /** Where listing links and images point (default https://market.example.test). */
  publicBaseUrl?: string;
  /** Sign-in requests per hour per address and per e-mail (default 1000: the tests that count set their own). */
  limits?: { perAddress: number; perEmail: number };
  /** Served over http, but tell the cookies it is https (what a TLS-terminating proxy in front does). */
  https?: boolean;
  /** The portal's host name in its links (default 127.0.0.1); a browser test maps it to loopback. */
  host?: string;
  /** WEBHOOK_RESEND_DAILY_BUDGET (default the API's 10,000). */
  resendDailyBudget?: number;
  /** The portal's spans (default: nothing recorded). */
  tracing?: Tracing;
  /** Send invitations (every 100 ms). Default true. */
  invitations?: boolean;
  logger?: Logger;
}

export async function startPortal(opts: PortalOptions = {}): Promise<PortalHarness> {
  const urls = testUrls();
  const logger = opts.logger ?? (process.env.TEST_LOGS ? createLogger({ service: "portal-test" }) : silentLogger);
  const sql = postgres(urls.DATABASE_URL, { max: 10, onnotice: () => {} });
  const sink = await startSmtpSink();
  const smtp = {
    host: "127.0.0.1",
    port: sink.port,
    secure: false,
    from: "Partner portal <portal@pss.test>",
    fromDomain: "pss.test",
  };
  const transport = createSmtpTransport(smtp);
  const mailer = createPortalMailer({ transport, smtp, logger });
  const sessions = createSessions({ sql });
  const publicBaseUrl = opts.publicBaseUrl ?? "https://market.example.test";
  const port = await freePort();
  const portalUrl = `${opts.https ? "https" : "http"}://${opts.host ?? "127.0.0.1"}:${port}/portal`;
  const signIn = createSignIn({
    sql,
    sessions,
    mailer,
    portalUrl,
    limits: opts.limits ?? { perAddress: 1000, perEmail: 1000 },
    logger,
  });
  const app = createPortalApp({
    sql,
    logger,
    signIn,
    sessions,
    publicBaseUrl,
    portalUrl: portalUrl,
    previews: createPreviewLinks({ sql, publicBaseUrl, ttlSeconds: 3600 }),
    // The tests' own client is the proxy: its X-Forwarded-For names the client (the limits per address).
    trustedProxies: parseTrustedProxies("127.0.0.1").proxies,
    // Every view computes: the tests read what they just wrote.
    overviewCacheMs: 0,
    webhookSecrets: testWebhookSecrets(),
    resendDailyBudget: opts.resendDailyBudget ?? 10_000,
  });
  // As main.ts serves it: every request in its server span.
  serveTraced(app, opts.tracing ?? disabledTracing("pss-portal"), { port, hostname: "127.0.0.1", development: false });
  const invitations =
    opts.invitations === false
      ? null
      : createInvitationSender({ sql, mailer, portalUrl: portalUrl, logger, intervalMs: 100 });
  invitations?.start();
  const origin = `http://127.0.0.1:${port}`;

  return {
    origin,
    portalUrl,
    sql,
    sink,
    signIn,
    sessions,
    client: () => createPortalClient(origin),
    async mailTo(to, subject, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = sink.received.filter((m) => m.envelopeTo.includes(to) && subject.test(m.headers.subject ?? ""));
        if (found.length) return found.at(-1)!;
        if (Date.now() > deadline) throw new Error(`no mail to ${to} with subject ${subject} within ${timeoutMs} ms`);
        await Bun.sleep(50);
      }
    },
    async stop() {
      await invitations?.stop();
      await signIn.settle();
      await app.stop();
      transport.close();
      await sink.stop();
      await sql.end({ timeout: 5 });
    },
  };
}

export interface PortalResponse {
  status: number;
  headers: Headers;
  text: string;
  /** Location of a redirect. */
  location: string | null;
}

export interface PortalClient {
  cookies: Map<string, string>;
  get(path: string): Promise<PortalResponse>;
  /** Posts a form as a browser on the portal's own page would (Origin: the portal). */
  post(path: string, form: Record<string, string>, headers?: Record<string, string>): Promise<PortalResponse>;
  /** The CSRF token of the first form on the page at `path`. */
  csrf(path: string): Promise<string>;
  /** Asks for a sign-in link for `email` (the sign-in page, then its form). */
  requestLink(email: string, headers?: Record<string, string>): Promise<PortalResponse>;
}

/** A link in a mail's text: the first http(s) URL under /portal/sign-in/. */
export function signInLinkIn(mail: ReceivedMail): string {
  const m = /(https?:\/\/\S+\/portal\/sign-in\/[A-Za-z0-9_-]{43})/.exec(mail.text ?? "");
  if (!m) throw new Error(`no sign-in link in: ${mail.text}`);
  return m[1]!;
}

export const csrfIn = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? null;

/** A browser-like client of the portal at `origin` (the in-process one, or one behind a balancer). */
export function createPortalClient(origin: string): PortalClient {
  const cookies = new Map<string, string>();
  const absorb = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (/Max-Age=0/i.test(line) || value === "") cookies.delete(name);
      else cookies.set(name, value);
    }
  };
  const cookieHeader = () => [...cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  const send = async (path: string, init: RequestInit): Promise<PortalResponse> => {
    const url = path.startsWith("http") ? path : `${origin}${path}`;
    const res = await fetch(url, {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers as Record<string, string>), cookie: cookieHeader() },
    });
    absorb(res);
    return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get("location") };
  };
  const client: PortalClient = {
    cookies,
    get: (path) => send(path, { method: "GET" }),
    post: (path, form, headers = {}) =>
      send(path, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", origin, ...headers },
        body: new URLSearchParams(form).toString(),
      }),
    async csrf(path) {
      const page = await client.get(path);
      const token = csrfIn(page.text);
      if (!token) throw new Error(`no form with a CSRF token at ${path} (status ${page.status})`);
      return token;
    },
    async requestLink(email, headers) {
      const csrf = await client.csrf("/portal/sign-in");
      return client.post("/portal/sign-in", { csrf, email }, headers);
    },
  };
  return client;
}

/** Signs `client` in as `email`: asks for a link, takes it from the sink, opens it. Returns the session cookie. */
export async function signInAs(portal: PortalHarness, client: PortalClient, email: string): Promise<string> {
  const before = portal.sink.received.length;
  const asked = await client.requestLink(email);
  if (asked.status !== 200) throw new Error(`asking for a link answered ${asked.status}`);
  const deadline = Date.now() + 15_000;
  let mail: ReceivedMail | undefined;
  while (!mail) {
    mail = portal.sink.received
      .slice(before)
      .find((m) => m.envelopeTo.includes(email) && /sign-in link/.test(m.headers.subject ?? ""));
    if (mail) break;
    if (Date.now() > deadline) throw new Error(`no sign-in mail for ${email}`);
    await Bun.sleep(50);
  }
  const opened = await client.get(signInLinkIn(mail));
  if (opened.status !== 303)
    throw new Error(`the sign-in link answered ${opened.status}: ${opened.text.slice(0, 300)}`);
  return client.cookies.get("pss_portal_session")!;
}

/**
 * Two portal users of a partner invited through the API (`PUT /partner/v1/portal-users/{email}` with `apiKey`, a
 * live key with lead tracking): one with lead access, one without. Their addresses; with `portal`, each also signed
 * in in a client of its own.
 */
export async function inviteTwo(
  apiBaseUrl: string,
  apiKey: string,
  prefix: string,
): Promise<{ lead: string; noLead: string }> {
  const lead = `${uniqueName(`${prefix}-lead`)}@brokerage.example`.toLowerCase();
  const noLead = `${uniqueName(`${prefix}-nolead`)}@brokerage.example`.toLowerCase();
  for (const [email, leadAccess] of [
    [lead, true],
    [noLead, false],
  ] as const) {
    const res = await call(apiBaseUrl, "PUT", `/partner/v1/portal-users/${encodeURIComponent(email)}`, {
      key: apiKey,
      body: { leadAccess },
    });
    if (res.status !== 201) throw new Error(`inviting ${email} answered ${res.status}`);
  }
  return { lead, noLead };
}

/** inviteTwo, then each signed in in a client of its own. */
export async function twoSignedIn(portal: PortalHarness, apiBaseUrl: string, apiKey: string, prefix: string) {
  const { lead, noLead } = await inviteTwo(apiBaseUrl, apiKey, prefix);
  const withLeads = portal.client();
  const withoutLeads = portal.client();
  await signInAs(portal, withLeads, lead);
  await signInAs(portal, withoutLeads, noLead);
  return { withLeads, withoutLeads, lead, noLead };
}
