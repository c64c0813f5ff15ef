// The portal's HTTP application as a factory (tests drive it with a real listener): routes, the session guard, CSRF
// on every form, and one error mapper that answers pages (never JSON, never a stack trace). Thin handlers: reads are
// in ../reads and @pss/api/record-reads, pages in ../pages.
import { Elysia } from "elysia";
import type postgres from "postgres";
import { RECORD_MODES, variantsWithUrls, type RecordMode } from "@pss/contracts";
import {
  activeSpanRecording,
  annotateRequest,
  isDependencyUnavailable,
  type HttpMetrics,
  type Logger,
  type SecretBox,
} from "@pss/service-kit";
import {
  ApiError,
  generateWebhookSecret,
  listDeliveries,
  pageEndpoints,
  queuePing,
  replayEvents,
  retryDelivery,
  rotateSecret,
  toEndpointRecord,
  type ActionOutcome,
  type WebhookScope,
} from "@pss/api/webhook-actions";
import { addressBucket, clientAddress, type PreviewLinks, type TrustedProxies } from "@pss/http-kit";
import {
  brokerHistory,
  findBroker,
  findListing,
  listingHistory,
  listingReportOf,
  readDailyStats,
  storedBrokerQuality,
} from "@pss/api/record-reads";
import type { Sessions, Viewer } from "./auth/sessions.ts";
import type { SignIn } from "./auth/sign-in.ts";
import { csrfTokenFor, isCsrfTokenFor, isTokenText, newToken } from "./auth/tokens.ts";
import { COOKIES, readCookies, setCookie } from "./http/cookies.ts";
import { accountBody } from "./pages/account-page.ts";
import { brokerBody, brokersBody } from "./pages/brokers-page.ts";
import { historyBeforeId } from "./pages/history.ts";
import { BASE, plainPage, portalPage } from "./pages/layout.ts";
import { listingBody } from "./pages/listing-page.ts";
import { listingsBody } from "./pages/listings-page.ts";
import { overviewBody } from "./pages/overview-page.ts";
import { LISTING_STATUSES, REPORT_STATES } from "./pages/parts.ts";
import { requestsBody } from "./pages/requests-page.ts";
import { deliveryBody, noticeText, secretBody, webhooksBody, webhooksPath } from "./pages/webhooks-page.ts";
import { failureStreaks, responseExcerpts } from "./reads/webhook-reads.ts";
import {
  checkEmailPage,
  formRefusedPage,
  limitedPage,
  linkRefusedPage,
  notFoundPage,
  signInPage,
  unavailablePage,
} from "./pages/sign-in-pages.ts";
import { readBrokers } from "./reads/broker-reads.ts";
import { readListings, recentlyUnsummarized, type ListingFilter } from "./reads/listing-reads.ts";
import { createOverviewCache } from "./reads/overview-cache.ts";
import { readOverview } from "./reads/overview-reads.ts";
import { readKeys, readRequests, STATUS_CLASSES, type StatusClass } from "./reads/request-reads.ts";
import { lastDays, type PortalScope } from "./reads/scope.ts";
import { LISTING_WARNING_CODES, WEBHOOK_EVENT_TYPES, type DeliveredEventType } from "@pss/contracts";

/** What the delivery log's event filter offers: every event type an endpoint may receive, and the test ping. */
const DELIVERED_EVENT_TYPES: readonly DeliveredEventType[] = [...WEBHOOK_EVENT_TYPES, "ping"];
import { html, isSameSiteForm } from "@pss/html";

export interface PortalDeps {
  sql: postgres.Sql;
  logger: Logger;
  signIn: SignIn;
  sessions: Sessions;
  /** The API's public address: listing links and image URLs. */
  publicBaseUrl: string;
  /** The portal's public address, ending in /portal. */
  portalUrl: string;
  previews: PreviewLinks;
  /** Proxies whose X-Forwarded-For names the client (the sign-in limits per address). */
  trustedProxies: TrustedProxies;
  httpMetrics?: HttpMetrics;
  /** How long the overview's figures are shared before they are computed again (0: every view computes). */
  overviewCacheMs: number;
  /** Encrypts a rotated webhook signing secret (WEBHOOK_SECRET_KEY, the API's and the webhooks service's). */
  webhookSecrets: SecretBox;
  /** Re-sent deliveries per partner and audience in 24 hours (WEBHOOK_RESEND_DAILY_BUDGET, the API's). */
  resendDailyBudget: number;
}

type Query = Record<string, string | undefined>;

const one = (v: unknown): string | undefined =>
  typeof v === "string" ? v : Array.isArray(v) && typeof v[0] === "string" ? v[0] : undefined;
const oneOf = <T extends string>(v: string | undefined, values: readonly T[]): T | undefined =>
  v !== undefined && (values as readonly string[]).includes(v) ? (v as T) : undefined;

/** Reached only through the guard: a viewer who may see a page. */
class SignInRequired extends Error {}
class FormRefused extends Error {}
class PageNotFound extends Error {}

export function createPortalApp(deps: PortalDeps) {
  const secure = deps.portalUrl.startsWith("https:");
  const started = new WeakMap<Request, number>();
  const log = deps.logger;

  const overviews = createOverviewCache({
    ttlMs: deps.overviewCacheMs,
    compute: (scope) => readOverview(deps.sql, scope),
  });

  const cookieFor = (name: string, value: string, maxAgeSeconds?: number) =>
    setCookie(name, value, { maxAgeSeconds, secure });

  async function viewerOf(request: Request): Promise<Viewer> {
    const viewer = await deps.sessions.find(readCookies(request).get(COOKIES.session));
    if (!viewer) throw new SignInRequired();
    annotateRequest({ "pss.partner_id": viewer.partnerId });
    return viewer;
  }

  function modeOf(raw: string): RecordMode {
    const mode = oneOf(raw, RECORD_MODES);
    if (!mode) throw new PageNotFound();
    return mode;
  }

  async function scopeOf(request: Request, rawMode: string): Promise<{ viewer: Viewer; scope: PortalScope }> {
    const mode = modeOf(rawMode);
    const viewer = await viewerOf(request);
    return { viewer, scope: { partnerId: viewer.partnerId, mode, leadAccess: viewer.leadAccess } };
  }

  /** A post from the signed-in viewer's own page: same site, and the form's token is this session's. */
  async function formViewer(request: Request, body: unknown): Promise<Viewer> {
    if (!isSameSiteForm(request, deps.portalUrl)) throw new FormRefused();
    const viewer = await deps.sessions.find(readCookies(request).get(COOKIES.session));
    if (!viewer) throw new SignInRequired();
    annotateRequest({ "pss.partner_id": viewer.partnerId });
    if (!isCsrfTokenFor(viewer.sessionToken, one((body as Record<string, unknown> | null)?.csrf)))
      throw new FormRefused();
    return viewer;
  }

  const redirect = (location: string, headers: Record<string, string | string[]> = {}) => {
    const h = new Headers({ location, "cache-control": "no-store" });
    for (const [k, v] of Object.entries(headers)) for (const value of [v].flat()) h.append(k, value);
    return new Response(null, { status: 303, headers: h });
  };

  /** The person's webhook scope: their partner and mode, lead-data endpoints only with lead access (as a key's). */
  const webhookScope = (scope: PortalScope): WebhookScope => ({
    partnerId: scope.partnerId,
    mode: scope.mode,
    leadData: scope.leadAccess,
  });

  /** A signed-in person's form post on a page of one mode. */
  async function formScope(request: Request, body: unknown, rawMode: string) {
    const mode = modeOf(rawMode);
    const viewer = await formViewer(request, body);
    return { viewer, scope: { partnerId: viewer.partnerId, mode, leadAccess: viewer.leadAccess } as PortalScope };
  }

  /** What a refused webhook action (404, 409, 400, 429 with Retry-After) says, as a page of the person's portal. */
  function actionRefused(viewer: Viewer, scope: PortalScope, status: number, message: string, headers = {}) {
    return portalPage({
      viewer,
      mode: scope.mode,
      section: "webhooks",
      title: "Not done",
      status,
      headers,
      body: html`<p><a href="${webhooksPath(scope)}">← Webhooks</a></p><h1>Not done</h1><p class="notice bad" role="alert">${message}</p>`,
    });
  }

  /** Runs a webhook action; its outcome as a redirect to where it shows, or the refusal as a page. */
  async function webhookAction<T>(
    viewer: Viewer,
    scope: PortalScope,
    act: () => Promise<ActionOutcome<T>>,
    done: (value: T) => Response,
    notFound: string,
  ): Promise<Response> {
    try {
      const outcome = await act();
      if ("notFound" in outcome) return actionRefused(viewer, scope, 404, notFound);
      if ("endpointDisabled" in outcome)
        return actionRefused(
          viewer,
          scope,
          409,
          'The endpoint is disabled: re-enable it first (a PUT with "enabled": true).',
        );
      return done(outcome.ok);
    } catch (err) {
      if (err instanceof ApiError) return actionRefused(viewer, scope, err.status, err.message, err.headers ?? {});
      throw err;
    }
  }

  async function keyPrefixes(partnerId: string, ids: (string | null)[]): Promise<Map<string, string>> {
    const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
    if (wanted.length === 0) return new Map();
    const rows = await deps.sql`
      SELECT id::text AS id, key_prefix FROM api_keys WHERE partner_id = ${partnerId}::uuid AND id = ANY(${wanted}::bigint[])`;
    return new Map(rows.map((r) => [r.id as string, r.key_prefix as string]));
  }

  const thumbnailOf = (variants: unknown[] | null): string | null => {
    const list = variantsWithUrls(variants, deps.publicBaseUrl).sort((a, b) => a.width - b.width);
    return (list.find((v) => v.format === "jpg" || v.format === "jpeg") ?? list[0])?.url ?? null;
  };

  // No Bun router (systemRouter): every request goes through the handler serveTraced wraps.
  const app = new Elysia({ normalize: false, systemRouter: false })
    .onRequest(({ request }) => {
      started.set(request, performance.now());
    })
    // The request's span (main.ts serves the app traced) is named by its route template, as the API's.
    .onTransform(({ request, route }) => {
      if (activeSpanRecording()) annotateRequest({}, { method: request.method, route });
    })
    .onError(({ code, error, request }) => {
      if (error instanceof SignInRequired) {
        const isGet = request.method === "GET" || request.method === "HEAD";
        return isGet
          ? redirect(`${BASE}/sign-in`)
          : plainPage(
              "Signed out",
              html`<h1>You are signed out</h1><p>Your session ended. <a href="${BASE}/sign-in">Sign in again</a>.</p>`,
              401,
            );
      }
      if (error instanceof FormRefused) return formRefusedPage();
      if (error instanceof PageNotFound || code === "NOT_FOUND") return notFoundPage();
      if (isDependencyUnavailable(error)) return unavailablePage();
      if (code === "PARSE" || code === "VALIDATION") return formRefusedPage();
      log.error("portal page failed", {
        err: error instanceof Error ? error : String(error),
        path: new URL(request.url).pathname,
      });
      return plainPage("Something went wrong", html`<h1>Something went wrong</h1><p>Try again in a moment.</p>`, 500);
    })
    .onAfterResponse(({ request, set, route }) => {
      const begun = started.get(request);
      if (deps.httpMetrics && begun !== undefined)
        deps.httpMetrics.observe({
          method: request.method,
          route,
          status: typeof set.status === "number" ? set.status : 200,
          seconds: (performance.now() - begun) / 1000,
        });
    })
    .get(BASE, () => redirect(`${BASE}/live`))
    .get(`${BASE}/`, () => redirect(`${BASE}/live`))

    // --- Signing in -------------------------------------------------------------------------------------------
    .get(`${BASE}/sign-in`, async ({ request, query }) => {
      const cookies = readCookies(request);
      // Already signed in: straight to the portal.
      if (await deps.sessions.find(cookies.get(COOKIES.session))) return redirect(`${BASE}/live`);
      let browser = cookies.get(COOKIES.browser);
      const headers: Record<string, string> = {};
      if (!isTokenText(browser)) {
        browser = newToken();
        headers["set-cookie"] = cookieFor(COOKIES.browser, browser, 30 * 24 * 3600);
      }
      return signInPage({ csrf: csrfTokenFor(browser), email: one(query.email), headers });
    })
    .post(`${BASE}/sign-in`, async ({ request, body, server }) => {
      const browser = readCookies(request).get(COOKIES.browser);
      const form = (body ?? {}) as Record<string, unknown>;
      if (!isSameSiteForm(request, deps.portalUrl) || !isTokenText(browser) || !isCsrfTokenFor(browser, one(form.csrf)))
        return formRefusedPage();
      const email = (one(form.email) ?? "").trim().toLowerCase();
      if (email.length === 0 || email.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
        return signInPage({
          csrf: csrfTokenFor(browser),
          email: one(form.email),
          notice: "Enter an e-mail address, e.g. jane@brokerage.example.",
          status: 400,
        });
      const outcome = await deps.signIn.requestLink({
        email,
        addressBucket: addressBucket(clientAddress(request, server, deps.trustedProxies)),
        browserToken: browser,
      });
      if ("retryAfterSeconds" in outcome) return limitedPage(outcome.retryAfterSeconds);
      return checkEmailPage({});
    })
    .get(`${BASE}/sign-in/:token`, async ({ request, params }) => {
      const outcome = await deps.signIn.useLink(params.token, readCookies(request).get(COOKIES.browser));
      if ("refused" in outcome) return linkRefusedPage(outcome.refused);
      return redirect(`${BASE}/live`, {
        "set-cookie": cookieFor(COOKIES.session, outcome.sessionToken, 7 * 24 * 3600),
      });
    })
    .post(`${BASE}/sign-out`, async ({ request, body }) => {
      const viewer = await formViewer(request, body);
      await deps.sessions.end(viewer.sessionToken);
      return redirect(`${BASE}/sign-in`, { "set-cookie": cookieFor(COOKIES.session, "", 0) });
    })
    .post(`${BASE}/sign-out-everywhere`, async ({ request, body }) => {
      const viewer = await formViewer(request, body);
      await deps.sessions.endAll(viewer.userId);
      return redirect(`${BASE}/sign-in`, { "set-cookie": cookieFor(COOKIES.session, "", 0) });
    })
    .get(`${BASE}/account`, async ({ request }) => {
      const viewer = await viewerOf(request);
      return portalPage({ viewer, mode: "live", section: "account", title: "Your account", body: accountBody(viewer) });
    })

    // --- Pages --------------------------------------------------------------------------------------------------
    .get(`${BASE}/:mode`, async ({ request, params }) => {
      const { viewer, scope } = await scopeOf(request, params.mode);
      const { overview, computedAt } = await overviews.get(scope);
      return portalPage({
        viewer,
        mode: scope.mode,
        section: "overview",
        title: "Overview",
        body: overviewBody(scope, overview, computedAt),
      });
    })
    .get(`${BASE}/:mode/listings`, async ({ request, params, query }) => {
      const { viewer, scope } = await scopeOf(request, params.mode);
      const q = query as Query;
      const filter: ListingFilter = {
        status: oneOf(one(q.status), LISTING_STATUSES),
        state: oneOf(one(q.state), REPORT_STATES),
        warning: oneOf(one(q.warning), LISTING_WARNING_CODES),
        broker: one(q.broker)?.trim() || undefined,
        q: one(q.q)?.trim().slice(0, 200) || undefined,
        after: one(q.after),
      };
      const [page, pending] = await Promise.all([
        readListings(deps.sql, scope, filter),
        filter.after ? Promise.resolve(0) : recentlyUnsummarized(deps.sql, scope),
      ]);
      return portalPage({
        viewer,
        mode: scope.mode,
        section: "listings",
        title: "Listings",
        body: listingsBody(scope, filter, page, pending),
      });
    })
    .get(`${BASE}/:mode/listings/:externalId`, async ({ request, params, query }) => {
      const { viewer, scope } = await scopeOf(request, params.mode);
      const listing = await findListing(deps.sql, scope, params.externalId);
      if (!listing) throw new PageNotFound();
      const link =
        scope.mode === "live"
          ? `${deps.publicBaseUrl}/listings/${listing.id}`
          : await deps.previews.listingUrl(listing.id);
      const days = lastDays(30);
      const [report, history, stats] = await Promise.all([
        listingReportOf(deps.sql, listing, { listingUrl: link, publicBaseUrl: deps.publicBaseUrl }),
        listingHistory(deps.sql, scope, listing.externalId, {
          limit: 50,
          beforeId: historyBeforeId(one((query as Query).history)),
        }),
        readDailyStats(deps.sql, {
          listingId: listing.id,
          mode: scope.mode,
          first: days[0] ?? "",
          last: days.at(-1) ?? "",
          inquiries: scope.leadAccess,
        }),
      ]);
      const entries = history?.results ?? [];
      const d = listing.document;
      return portalPage({
        viewer,
        mode: scope.mode,
        section: "listings",
        title: d.title ?? listing.externalId,
        body: listingBody(scope, {
          title: d.title ?? `${d.businessType} (${listing.externalId})`,
          externalId: listing.externalId,
          status: d.status,
          brokerExternalId: listing.brokerExternalId,
          businessType: d.businessType,
          report,
          photos: listing.photos.map((p) => ({
            url: p.url,
            state: p.state,
            width: p.width,
            height: p.height,
            failureReason: p.failureReason,
            thumbnail: p.state === "ready" ? thumbnailOf(p.variants) : null,
          })),
          link,
          days,
          views: days.map((day) => stats.get(day)?.views ?? 0),
          impressions: days.map((day) => stats.get(day)?.impressions ?? 0),
          inquiries: scope.leadAccess ? days.map((day) => stats.get(day)?.inquiries ?? 0) : null,
          history: entries,
          olderHistory: history?.nextCursor ?? null,
          keyPrefixes: await keyPrefixes(
            scope.partnerId,
            entries.map((e) => e.keyId),
          ),
        }),
      });
    })
    .get(`${BASE}/:mode/brokers`, async ({ request, params, query }) => {
      const { viewer, scope } = await scopeOf(request, params.mode);
      const q =
        one((query as Query).q)
          ?.trim()
          .slice(0, 200) || undefined;
      const after = one((query as Query).after);
      const page = await readBrokers(deps.sql, scope, { q, after });
      return portalPage({
        viewer,
        mode: scope.mode,
        section: "brokers",
        title: "Brokers",
        body: brokersBody(scope, q, after, page),
      });
    })
    .get(`${BASE}/:mode/brokers/:externalId`, async ({ request, params, query }) => {
      const { viewer, scope } = await scopeOf(request, params.mode);
      const broker = await findBroker(deps.sql, scope, params.externalId);
      if (!broker) throw new PageNotFound();
      const link =
        scope.mode === "live" ? `${deps.publicBaseUrl}/brokers/${broker.id}` : await deps.previews.brokerUrl(broker.id);
      const [listings, history] = await Promise.all([
        readListings(deps.sql, scope, { broker: broker.externalId }),
        brokerHistory(deps.sql, scope, broker.externalId, {
          limit: 50,
          beforeId: historyBeforeId(one((query as Query).history)),
        }),
      ]);
      const quality = storedBrokerQuality(broker);
      const entries = history?.results ?? [];
      const doc = broker.document;
      return portalPage({
        viewer,
        mode: scope.mode,
        section: "brokers",
        title: doc.name,
        body: brokerBody(scope, {
          externalId: broker.externalId,
          name: doc.name,
          email: doc.email,
          phone: doc.phone ?? null,
          forwardingEmail: doc.forwardingEmail ?? null,
          avatar: {
            url: doc.avatarUrl ?? null,
            state: broker.avatar.state,
            failureReason: broker.avatar.failureReason,
            width: broker.avatar.width,
            height: broker.avatar.height,
            thumbnail: broker.avatar.state === "ready" ? thumbnailOf(broker.avatar.variants) : null,
          },
          warnings: quality.warnings,
          score: quality.qualityScore,
          link,
          listings: { rows: listings.rows, more: listings.next !== null },
          history: entries,
          olderHistory: history?.nextCursor ?? null,
          keyPrefixes: await keyPrefixes(
            scope.partnerId,
            entries.map((e) => e.keyId),
          ),
        }),
      });
    })
    .get(`${BASE}/:mode/webhooks`, async ({ request, params, query }) => {
      const { viewer, scope } = await scopeOf(request, params.mode);
      const q = query as Query;
      const day = (v: string | undefined) =>
        v && /^\d{4}-\d\d-\d\d$/.test(v) && !Number.isNaN(Date.parse(v)) ? v : undefined;
      const filter = {
        endpoint: one(q.endpoint)?.slice(0, 128) || undefined,
        status: oneOf(one(q.status), ["pending", "delivered", "failed"] as const),
        event: oneOf<DeliveredEventType>(one(q.event), DELIVERED_EVENT_TYPES),
        from: day(one(q.from)),
        to: day(one(q.to)),
        cursor: one(q.cursor),
      };
      const ws = webhookScope(scope);
      const endpoints = (await pageEndpoints(deps.sql, ws, null, 100)).map((e) => ({
        stored: e,
        record: toEndpointRecord(e),
      }));
      let page: Awaited<ReturnType<typeof listDeliveries>>;
      try {
        page = await listDeliveries(deps.sql, {
          scope: ws,
          endpointExternalId: filter.endpoint,
          status: filter.status,
          eventType: filter.event,
          createdFrom: filter.from ? new Date(`${filter.from}T00:00:00Z`) : undefined,
          createdBefore: filter.to ? new Date(Date.parse(`${filter.to}T00:00:00Z`) + 86_400_000) : undefined,
          limit: 50,
          cursor: filter.cursor,
        });
      } catch (err) {
        // A cursor that is not one the page made: start from the newest.
        if (!(err instanceof ApiError)) throw err;
        page = await listDeliveries(deps.sql, { scope: ws, limit: 50 });
      }
      const streakById = await failureStreaks(
        deps.sql,
        endpoints.map((e) => e.stored.id),
      );
      return portalPage({
        viewer,
        mode: scope.mode,
        section: "webhooks",
        title: "Webhooks",
        body: webhooksBody({
          scope,
          viewer,
          endpoints: endpoints.map((e) => e.record),
          streaks: new Map(endpoints.map((e) => [e.record.endpointId, streakById.get(e.stored.id) ?? 0])),
          deliveries: page.results,
          next: page.nextCursor,
          filter,
          notice: noticeText(one(q.notice), one(q.n)),
        }),
      });
    })
    .get(`${BASE}/:mode/webhooks/deliveries/:deliveryId`, async ({ request, params, query }) => {
      const { viewer, scope } = await scopeOf(request, params.mode);
      if (!/^[0-9a-f-]{36}$/i.test(params.deliveryId)) throw new PageNotFound();
      const { results } = await listDeliveries(deps.sql, {
        scope: webhookScope(scope),
        deliveryId: params.deliveryId.toLowerCase(),
        limit: 1,
      });
      const delivery = results[0];
      if (!delivery) throw new PageNotFound();
      const excerpts = await responseExcerpts(deps.sql, [delivery.deliveryId]);
      return portalPage({
        viewer,
        mode: scope.mode,
        section: "webhooks",
        title: "Delivery",
        body: deliveryBody({
          scope,
          viewer,
          delivery,
          excerpts: excerpts.get(delivery.deliveryId) ?? new Map(),
          notice: noticeText(one((query as Query).notice), undefined),
        }),
      });
    })
    .post(`${BASE}/:mode/webhooks/deliveries/:deliveryId/resend`, async ({ request, params, body }) => {
      const { viewer, scope } = await formScope(request, body, params.mode);
      const id = params.deliveryId.toLowerCase();
      if (!/^[0-9a-f-]{36}$/.test(id)) throw new PageNotFound();
      return webhookAction(
        viewer,
        scope,
        () => retryDelivery(deps.sql, webhookScope(scope), id, { dailyBudget: deps.resendDailyBudget }),
        () => redirect(`${webhooksPath(scope)}/deliveries/${id}?notice=resent`),
        "No such delivery here.",
      );
    })
    .post(`${BASE}/:mode/webhooks/endpoints/:endpointId/test`, async ({ request, params, body }) => {
      const { viewer, scope } = await formScope(request, body, params.mode);
      return webhookAction(
        viewer,
        scope,
        () => queuePing(deps.sql, webhookScope(scope), params.endpointId, { dailyBudget: deps.resendDailyBudget }),
        () => redirect(`${webhooksPath(scope)}?endpoint=${encodeURIComponent(params.endpointId)}&notice=tested`),
        "No such endpoint here.",
      );
    })
    .post(`${BASE}/:mode/webhooks/endpoints/:endpointId/replay`, async ({ request, params, body }) => {
      const { viewer, scope } = await formScope(request, body, params.mode);
      const form = (body ?? {}) as Record<string, unknown>;
      // datetime-local fields carry no zone: the page says they are UTC.
      const instant = (v: string | undefined) =>
        v && /^\d{4}-\d\d-\d\dT\d\d(:\d\d){1,2}$/.test(v) ? `${v.length === 16 ? `${v}:00` : v}Z` : undefined;
      const number = (v: string | undefined) => (v && /^\d{1,15}$/.test(v) ? Number(v) : undefined);
      const range = {
        since: instant(one(form.since)),
        until: instant(one(form.until)),
        afterSequence: number(one(form.afterSequence)),
        throughSequence: number(one(form.throughSequence)),
      };
      const given = Object.fromEntries(Object.entries(range).filter(([, v]) => v !== undefined));
      if (Object.keys(given).length === 0)
        return actionRefused(
          viewer,
          scope,
          400,
          "Give the range to replay: a start or an end time, or change-feed numbers.",
        );
      return webhookAction(
        viewer,
        scope,
        () =>
          replayEvents(deps.sql, webhookScope(scope), params.endpointId, given, {
            publicBaseUrl: deps.publicBaseUrl,
            dailyBudget: deps.resendDailyBudget,
          }),
        (queued) =>
          redirect(
            `${webhooksPath(scope)}?endpoint=${encodeURIComponent(params.endpointId)}&notice=replayed&n=${queued}`,
          ),
        "No such endpoint here.",
      );
    })
    .post(`${BASE}/:mode/webhooks/endpoints/:endpointId/rotate-secret`, async ({ request, params, body }) => {
      const { viewer, scope } = await formScope(request, body, params.mode);
      const secret = generateWebhookSecret();
      const rotated = await rotateSecret(
        deps.sql,
        webhookScope(scope),
        params.endpointId,
        deps.webhookSecrets.encrypt(secret),
      );
      if (!rotated) return actionRefused(viewer, scope, 404, "No such endpoint here.");
      // Shown once, on this answer to the POST (never on a page one could reload or find in the history).
      return portalPage({
        viewer,
        mode: scope.mode,
        section: "webhooks",
        title: "New signing secret",
        body: secretBody(scope, params.endpointId, secret, rotated.previousSecretExpiresAt),
      });
    })
    .get(`${BASE}/:mode/requests`, async ({ request, params, query }) => {
      const { viewer, scope } = await scopeOf(request, params.mode);
      const q = query as Query;
      const keyId = one(q.key);
      const filter = {
        statusClass: oneOf(one(q.class), STATUS_CLASSES) as StatusClass | undefined,
        path: one(q.path)?.trim().slice(0, 500) || undefined,
        keyId: keyId && /^[1-9][0-9]{0,18}$/.test(keyId) ? keyId : undefined,
        before: one(q.before),
      };
      const [keys, page] = await Promise.all([readKeys(deps.sql, scope), readRequests(deps.sql, scope, filter)]);
      return portalPage({
        viewer,
        mode: scope.mode,
        section: "requests",
        title: "API requests",
        body: requestsBody(scope, filter, keys, page),
      });
    });

  return app;
}

export type PortalApp = ReturnType<typeof createPortalApp>;
