// The status table: every status each operation can answer, each one provoked against the real API, and the
// OpenAPI document's answers compared with it, operation by operation. Some answers come from the HTTP edge and the
// partner group whatever the route (413, 414, 431, 501, and for partner routes 401 and 429; 400 and 415 wherever a
// body is read), the rest from the route. The success answers are the document's own request examples, sent as
// shown (service-assigned IDs replaced by this partner's). 500 is a bug and cannot be provoked; a 503 is provoked by
// an API whose PostgreSQL and OpenSearch are unreachable; the webhook re-send routes' own 429 (their daily budget)
// by an API whose budget is 1 delivery; every POST's 422 by an Idempotency-Key sent again with another request.
// Methods: a path answers 405 (with Allow) to a standard method it does not serve and 501 to any other method, as
// components.responses states.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ListingPublished, servedByPartnerApi } from "@pss/contracts";
import {
  createFeedSequencer,
  insertOutboxFacts,
  partnerFactRow,
  silentLogger,
  type FeedSequencer,
} from "@pss/service-kit";
import { createPartnerAdmin } from "../src/admin/partner-admin.ts";
import { freePort } from "../../../test/support/ports.ts";
import { call, startApi, type ApiHarness, type Partner } from "./support/harness.ts";
import { sendRaw } from "./support/raw-http.ts";

type Json = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  op: Json;
}

let api: ApiHarness;
/** The same application with a per-key limit of 1 request a minute, and 1 lead an hour per address. */
let limited: ApiHarness;
/** The same application whose PostgreSQL and OpenSearch cannot be reached. */
let down: ApiHarness;
/** The same application with a daily webhook re-send budget of 1 delivery (per partner and audience). */
let budgeted: ApiHarness;
let sequencer: FeedSequencer;
let doc: Json;
let operations: Operation[];
let partner: Partner;
/** The partner's live key without lead tracking. */
let noLeadKey: string;
/** IDs the service assigns, in place of the examples' own. */
const assigned: Record<string, string> = {};

beforeAll(async () => {
  api = await startApi({ relay: false });
  limited = await startApi({ relay: false, rateLimitPerMinute: 1, leadLimits: { perAddress: 1 } });
  budgeted = await startApi({ relay: false, webhookResendDailyBudget: 1 });
  down = await startApi({
    relay: false,
    databaseUrl: `postgres://pss:pss@127.0.0.1:${await freePort()}/none`,
    opensearchUrl: `http://127.0.0.1:${await freePort()}`,
  });
  sequencer = createFeedSequencer({ sql: api.sql, logger: silentLogger }, { retentionDays: 35, idlePollMs: 20 });
  sequencer.start();
  doc = (await call(api.baseUrl, "GET", "/partner/v1/openapi.json")).body;
  operations = Object.entries<Json>(doc.paths).flatMap(([path, methods]) =>
    Object.entries<Json>(methods).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
  partner = await api.createPartner({ leadTracking: true, test: true });
  noLeadKey = (await createPartnerAdmin({ sql: api.sql, redis: api.redis }).createKey({ partnerId: partner.partnerId }))
    .apiKey;
  assigned.officeId = String(partner.officeId);
  assigned.organizationId = String(partner.organizationId);
}, 60_000);

afterAll(async () => {
  await sequencer?.stop();
  await Promise.all([api, limited, budgeted, down].map((a) => a?.stop()));
}, 60_000);

const name = (o: Operation) => `${o.method} ${o.path}`;
const isPublic = (o: Operation) => o.op.security?.length === 0;
const readsBody = (o: Operation) => ["POST", "PUT", "DELETE"].includes(o.method);

/** The path with each parameter from the document's example (or `params`), percent-encoded. */
function pathOf(o: Operation, params: Record<string, string> = {}): string {
  return o.path.replace(/\{(\w+)\}/g, (_, p: string) => {
    const example = o.op.parameters?.find((x: Json) => x.name === p)?.example;
    return encodeURIComponent(params[p] ?? assigned[p] ?? example);
  });
}

/** The operation's request example, as the document shows it (`params` replace path parameters). */
function example(o: Operation, params: Record<string, string> = {}) {
  const query = Object.fromEntries(
    (o.op.parameters ?? [])
      .filter((p: Json) => p.in === "query" && p.example !== undefined)
      .map((p: Json) => [p.name, p.example]),
  );
  const body = Object.values<Json>(o.op.requestBody?.content["application/json"].examples ?? {})[0]?.value;
  const search = new URLSearchParams(query).toString();
  return { path: `${pathOf(o, params)}${search ? `?${search}` : ""}`, body };
}

const op = (key: string) => {
  const found = operations.find((o) => name(o) === key);
  if (!found) throw new Error(`the document has no operation ${key}`);
  return found;
};

async function send(
  target: ApiHarness,
  o: Operation,
  opts: { key?: string; path?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<number> {
  return (await answer(target, o, opts)).status;
}

/** How a request differs from the operation's example request. */
type AnswerOptions = { key?: string; path?: string; body?: unknown; headers?: Record<string, string> };

/** Where a path is served: the partner API's, or the marketplace's (buyers' routes), as the balancer routes it. */
const baseFor = (target: ApiHarness, path: string) =>
  servedByPartnerApi(path.split("?")[0]!) ? target.baseUrl : target.marketplaceUrl;

/** The operation's example request (or its variant in `opts`), answered. */
function answer(target: ApiHarness, o: Operation, opts: AnswerOptions = {}) {
  const ex = example(o);
  const path = opts.path ?? ex.path;
  return call(baseFor(target, path), o.method, path, {
    key: opts.key ?? (isPublic(o) ? undefined : partner.apiKey),
    body: opts.body === undefined ? ex.body : opts.body === null ? undefined : opts.body,
    headers: opts.headers,
  });
}

/** Fields whose values an example must show as the API answers them (others differ from run to run). */
const STABLE = new Set([
  "status",
  "message",
  "error",
  "code",
  "httpStatus",
  "changed",
  "outcome",
  "mode",
  "type",
  "step",
  "dryRun",
  "leadTracking",
]);

/**
 * Where an example differs from a real answer in shape: the same fields at every level (arrays compared by their
 * first element), and the same values of the fields that do not change from run to run (numbers in messages aside).
 */
export function shapeDifferences(example: unknown, real: unknown, at = ""): string[] {
  if (Array.isArray(example) && Array.isArray(real))
    return example.length && real.length ? shapeDifferences(example[0], real[0], `${at}[0]`) : [];
  if (example && real && typeof example === "object" && typeof real === "object") {
    const e = example as Json;
    const r = real as Json;
    const keys = [...new Set([...Object.keys(e), ...Object.keys(r)])];
    return keys.flatMap((k) => {
      if (!(k in e)) return [`${at}.${k}: in the answer, not in the example`];
      if (!(k in r)) return [`${at}.${k}: in the example, not in the answer`];
      // A record's own status (a listing's, a delivery's) varies; the answer's (success, error) does not.
      if (
        (k !== "status" || at === "") &&
        STABLE.has(k) &&
        typeof e[k] === "string" &&
        String(e[k]).replace(/\d+/g, "N") !== String(r[k]).replace(/\d+/g, "N")
      )
        return [`${at}.${k}: example ${JSON.stringify(e[k])}, answer ${JSON.stringify(r[k])}`];
      return shapeDifferences(e[k], r[k], `${at}.${k}`);
    });
  }
  if (example === null || real === null) return [];
  return typeof example === typeof real ? [] : [`${at}: example ${typeof example}, answer ${typeof real}`];
}

/** A request written byte by byte (a GET with a body, any method token). */
async function raw(target: ApiHarness, method: string, path: string, lines: string[] = [], body = "") {
  const port = Number(new URL(baseFor(target, path)).port);
  const head = [`${method} ${path} HTTP/1.1`, "Host: api.example.test", ...lines, "Connection: close"].join("\r\n");
  return sendRaw(port, `${head}\r\n\r\n${body}`);
}

test("the status table: every status each operation answers is provoked, and the document lists exactly those", async () => {
  /** Provoked statuses by operation: what the API answered each time it was asked for each (a 429 is provoked both
   * by the per-key limit and, on the re-send routes, by their budget: every answer counts). */
  const provoked = new Map<string, Map<number, number[]>>();
  const record = (o: Operation, wanted: number, got: number) => {
    const m = provoked.get(name(o)) ?? new Map<number, number[]>();
    m.set(wanted, [...(m.get(wanted) ?? []), got]);
    provoked.set(name(o), m);
  };
  /** Where examples and real answers differ in shape. */
  const unlike: string[] = [];
  /** A route's own answer: its status, and its body against the document's example of that status. */
  const expectAnswer = async (key: string, wanted: number, opts: AnswerOptions = {}, target: ApiHarness = api) => {
    const o = op(key);
    const res = await answer(target, o, opts);
    record(o, wanted, res.status);
    if (wanted === 429 && res.status === 429 && !/^[1-9][0-9]*$/.test(res.headers.get("retry-after") ?? ""))
      unlike.push(`${key} 429: Retry-After ${res.headers.get("retry-after")}`);
    const shown = Object.values<Json>(o.op.responses[String(wanted)]?.content?.["application/json"]?.examples ?? {})[0];
    // The document's own example is abridged.
    if (shown && res.status === wanted && key !== "GET /partner/v1/openapi.json")
      for (const d of shapeDifferences(shown.value, res.body)) unlike.push(`${key} ${wanted}: ${d}`);
  };

  /**
   * A POST's success sent with an Idempotency-Key (so its answer is kept), then another request (`other`: another
   * path or query) with the same key, which is 422: every POST takes one (docs/partner-api.md, "Idempotency-Key").
   */
  const expectKeyed = async (key: string, wanted: number, opts: AnswerOptions, other: AnswerOptions) => {
    const headers = { ...opts.headers, "idempotency-key": crypto.randomUUID() };
    await expectAnswer(key, wanted, { ...opts, headers });
    await expectAnswer(key, 422, { ...opts, ...other, headers });
  };
  const dryRunOf = (key: string) => ({ path: `${example(op(key)).path}?dryRun=true` });

  // --- The routes' own answers, in an order that builds what the next needs. -----------------------------------
  const P = "/partner/v1";
  const testKey = partner.test!.apiKey;
  await expectAnswer("GET /partner/v1/openapi.json", 200);
  await expectAnswer(`GET ${P}/health`, 200);
  // Brokers.
  const putBroker = op(`PUT ${P}/brokers/{externalBrokerId}`);
  await expectAnswer(name(putBroker), 201);
  await expectAnswer(name(putBroker), 200);
  const broker = await call(api.baseUrl, "GET", `${P}/brokers/B-7`, { key: partner.apiKey });
  assigned.serviceBrokerId = broker.body.broker.serviceBrokerId;
  for (const key of [`GET ${P}/brokers/{externalBrokerId}`, `GET ${P}/brokers/{externalBrokerId}/history`]) {
    await expectAnswer(key, 200);
    await expectAnswer(key, 404, { path: example(op(key), { externalBrokerId: "nope" }).path });
  }
  await expectAnswer(`GET ${P}/brokers`, 200);
  await expectKeyed(`POST ${P}/brokers/batch`, 200, {}, dryRunOf(`POST ${P}/brokers/batch`));
  // Listings.
  const putListing = op(`PUT ${P}/listings/{externalListingId}`);
  await expectAnswer(name(putListing), 201);
  await expectAnswer(name(putListing), 200);
  await expectAnswer(name(putListing), 404, {
    path: pathOf(putListing, { externalListingId: "L-9" }),
    body: { ...example(putListing).body, brokerExternalId: "nope" },
  });
  const listing = await call(api.baseUrl, "GET", `${P}/listings/L-1042`, { key: partner.apiKey });
  assigned.serviceListingId = String(listing.body.listing.serviceListingId);
  for (const key of [
    `GET ${P}/listings/{externalListingId}`,
    `GET ${P}/listings/{externalListingId}/history`,
    `GET ${P}/listings/{externalListingId}/report`,
    `GET ${P}/listings/{externalListingId}/stats`,
  ]) {
    await expectAnswer(key, 200);
    await expectAnswer(key, 404, { path: example(op(key), { externalListingId: "nope" }).path });
  }
  await expectAnswer(`GET ${P}/listings`, 200);
  await expectKeyed(`POST ${P}/listings/batch`, 200, {}, dryRunOf(`POST ${P}/listings/batch`));
  // The feed: 200, and 410 once retention removed what after= points before.
  const feed = op(`GET ${P}/events`);
  await expectAnswer(name(feed), 200);
  await waitFor(
    async () => (await call(api.baseUrl, "GET", `${P}/events`, { key: partner.apiKey })).body.results?.length >= 2,
  );
  await api.sql`UPDATE partner_feed SET sequenced_at = now() - interval '40 days' WHERE partner_id = ${partner.partnerId} AND seq = 1`;
  expect(await sequencer.prune()).toBeGreaterThanOrEqual(1);
  await expectAnswer(name(feed), 410, { path: `${P}/events?after=0` });
  // Lead counts: the example's office and organization are this partner's.
  for (const key of [
    `GET ${P}/offices/{officeId}/leads/count`,
    `GET ${P}/organizations/{organizationId}/leads/count`,
  ]) {
    await expectAnswer(key, 200);
    const param = key.includes("offices") ? "officeId" : "organizationId";
    await expectAnswer(key, 404, { path: example(op(key), { [param]: "2147483647" }).path });
  }
  // Webhook endpoints. No indexer runs here: the listing's listing.published fact is written as the indexer writes it
  // (its outbox row and feed draft), and numbered by the sequencer, so that replay has an event to send.
  await insertOutboxFacts(api.sql, [
    partnerFactRow(
      ListingPublished,
      { aggregateId: assigned.serviceListingId!, version: 1, partnerId: partner.partnerId, mode: "live" },
      {
        externalListingId: "L-1042",
        serviceListingId: Number(assigned.serviceListingId),
        externalBrokerId: "B-7",
        serviceBrokerId: assigned.serviceBrokerId!,
        status: "FOR_SALE",
        version: 1,
      },
    ),
  ]);
  await waitFor(async () =>
    (await call(api.baseUrl, "GET", `${P}/events?limit=1000`, { key: noLeadKey })).body.results?.some(
      (e: Json) => e.type === "listing.published",
    ),
  );
  const putEndpoint = op(`PUT ${P}/webhook-endpoints/{endpointId}`);
  await expectAnswer(name(putEndpoint), 201);
  await expectAnswer(name(putEndpoint), 200, { body: { description: "CRM sync" } });
  // No 404: an ID taken by an endpoint a key without lead tracking cannot see (one subscribed to lead.received) is
  // free for that key, which creates an endpoint of its own with it (IDs are per audience).
  await call(api.baseUrl, "PUT", `${P}/webhook-endpoints/leads`, {
    key: partner.apiKey,
    body: { url: "https://crm.acme-brokers.example/leads", events: ["lead.received"] },
  });
  await expectAnswer(name(putEndpoint), 201, { key: noLeadKey, path: pathOf(putEndpoint, { endpointId: "leads" }) });
  const ping = await call(api.baseUrl, "POST", `${P}/webhook-endpoints/crm/test`, { key: partner.apiKey });
  assigned.deliveryId = ping.body.deliveryId;
  // The deliveries list while the ping is the newest (the replay below adds a newer one).
  await expectAnswer(`GET ${P}/webhook-deliveries`, 200);
  for (const key of [
    `GET ${P}/webhook-endpoints/{endpointId}`,
    `POST ${P}/webhook-endpoints/{endpointId}/rotate-secret`,
    `POST ${P}/webhook-endpoints/{endpointId}/test`,
    `POST ${P}/webhook-endpoints/{endpointId}/recover`,
    `POST ${P}/webhook-endpoints/{endpointId}/replay`,
  ]) {
    const success = op(key).op.responses["202"] ? 202 : 200;
    if (op(key).method === "POST")
      await expectKeyed(key, success, {}, { path: example(op(key), { endpointId: "other" }).path });
    else await expectAnswer(key, success);
    await expectAnswer(key, 404, { path: example(op(key), { endpointId: "nope" }).path });
  }
  await expectAnswer(`GET ${P}/webhook-endpoints`, 200);
  const retry = op(`POST ${P}/webhook-deliveries/{deliveryId}/retry`);
  await expectKeyed(
    name(retry),
    202,
    {},
    { path: pathOf(retry, { deliveryId: "00000000-0000-4000-8000-000000000001" }) },
  );
  await expectAnswer(name(retry), 404, { path: pathOf(retry, { deliveryId: "00000000-0000-4000-8000-000000000000" }) });
  // 429: test, recover, replay and retry share one daily re-send budget per partner and audience. On an API whose
  // budget is 1 delivery, the pings above have spent it for endpoints without lead data. Disabling and re-enabling
  // the endpoint fails what is pending, so recover has failed deliveries to send again and no replay is running
  // (whose 429 comes first); the replay's range holds the one published event, so it fits the whole budget (more
  // would be a 400) but not what is left of it.
  await call(api.baseUrl, "PUT", `${P}/webhook-endpoints/crm`, { key: partner.apiKey, body: { enabled: false } });
  await call(api.baseUrl, "PUT", `${P}/webhook-endpoints/crm`, { key: partner.apiKey, body: { enabled: true } });
  for (const key of [
    `POST ${P}/webhook-endpoints/{endpointId}/test`,
    `POST ${P}/webhook-endpoints/{endpointId}/recover`,
    `POST ${P}/webhook-endpoints/{endpointId}/replay`,
    `POST ${P}/webhook-deliveries/{deliveryId}/retry`,
  ])
    await expectAnswer(key, 429, {}, budgeted);
  // 409: a disabled endpoint refuses re-sending; a 21st endpoint is refused.
  await call(api.baseUrl, "PUT", `${P}/webhook-endpoints/crm`, { key: partner.apiKey, body: { enabled: false } });
  for (const key of [
    `POST ${P}/webhook-endpoints/{endpointId}/test`,
    `POST ${P}/webhook-endpoints/{endpointId}/recover`,
    `POST ${P}/webhook-endpoints/{endpointId}/replay`,
  ])
    await expectAnswer(key, 409);
  await expectAnswer(name(retry), 409);
  for (let i = 0; i < 19; i++)
    await call(api.baseUrl, "PUT", `${P}/webhook-endpoints/more-${i}`, {
      key: partner.apiKey,
      body: { url: `https://crm.acme-brokers.example/more-${i}`, events: ["listing.published"] },
    });
  await expectAnswer(name(putEndpoint), 409, { path: pathOf(putEndpoint, { endpointId: "one-more" }) });
  const deleteEndpoint = op(`DELETE ${P}/webhook-endpoints/{endpointId}`);
  await expectAnswer(name(deleteEndpoint), 200);
  await expectAnswer(name(deleteEndpoint), 404);
  // Test mode: a test key's records; a live key gets 403; a lead on a listing buyers do not see, 409.
  const testLead = op(`POST ${P}/test/listings/{externalListingId}/leads`);
  const purge = op(`DELETE ${P}/test-data`);
  await call(api.baseUrl, "PUT", `${P}/brokers/B-7`, { key: testKey, body: example(putBroker).body });
  await call(api.baseUrl, "PUT", `${P}/listings/L-1042`, { key: testKey, body: example(putListing).body });
  await expectKeyed(name(testLead), 202, { key: testKey }, { path: pathOf(testLead, { externalListingId: "other" }) });
  await expectAnswer(name(testLead), 403);
  await expectAnswer(name(testLead), 404, { key: testKey, path: pathOf(testLead, { externalListingId: "nope" }) });
  await call(api.baseUrl, "PUT", `${P}/listings/L-1042`, { key: testKey, body: { status: "ARCHIVED" } });
  await expectAnswer(name(testLead), 409, { key: testKey });
  await expectAnswer(name(purge), 200, { key: testKey });
  await expectAnswer(name(purge), 403);
  // Portal users: live keys only (403 to a test key); lead access only from a key with lead tracking (401); an
  // address that is not one (400); the partner's 501st person (409, the others written directly).
  const putUser = op(`PUT ${P}/portal-users/{email}`);
  const deleteUser = op(`DELETE ${P}/portal-users/{email}`);
  const listUsers = op(`GET ${P}/portal-users`);
  await expectAnswer(name(putUser), 201);
  await expectAnswer(name(putUser), 200);
  await expectAnswer(name(putUser), 401, { key: noLeadKey });
  await expectAnswer(name(putUser), 403, { key: testKey });
  await expectAnswer(name(putUser), 400, { path: pathOf(putUser, { email: "not-an-address" }) });
  await expectAnswer(name(listUsers), 200);
  await expectAnswer(name(listUsers), 403, { key: testKey });
  await expectAnswer(name(deleteUser), 403, { key: testKey });
  await expectAnswer(name(deleteUser), 400, { path: pathOf(deleteUser, { email: "not-an-address" }) });
  await expectAnswer(name(deleteUser), 200);
  await expectAnswer(name(deleteUser), 404);
  await api.sql`
    INSERT INTO portal_users (partner_id, email, invitation_state, invitation_due_at)
    SELECT ${partner.partnerId}::uuid, 'person-' || n || '@acme-brokers.example', 'sent', NULL
    FROM generate_series(1, 500) AS n`;
  await expectAnswer(name(putUser), 409);
  // Buyers: the listing and broker written above; unknown IDs; a search parameter out of range.
  const search = op("GET /v1/listings");
  await expectAnswer(name(search), 200);
  for (const key of ["GET /v1/listings/{serviceListingId}", "GET /v1/brokers/{serviceBrokerId}"]) {
    await expectAnswer(key, 200);
    const param = key.includes("brokers") ? "serviceBrokerId" : "serviceListingId";
    await expectAnswer(key, 404, { path: pathOf(op(key), { [param]: "999999999999" }) });
  }
  const lead = op("POST /v1/listings/{serviceListingId}/leads");
  await expectKeyed(name(lead), 202, {}, { path: pathOf(lead, { serviceListingId: "999999999999" }) });
  await expectAnswer(name(lead), 404, { path: pathOf(lead, { serviceListingId: "999999999999" }) });

  // --- What any operation can answer (operations in parallel: each probe stands alone). -----------------------
  const pad = "x".repeat(9000);
  const admin = createPartnerAdmin({ sql: api.sql, redis: api.redis });
  await Promise.all(
    operations.map(async (o) => {
      const key = isPublic(o) ? undefined : o.path.startsWith(`${P}/test`) ? testKey : partner.apiKey;
      record(o, 414, await send(api, o, { key, path: `${pathOf(o)}?pad=${pad}` }));
      record(o, 431, await send(api, o, { key, headers: { "x-padding": "y".repeat(17_000) } }));
      const big = await raw(
        api,
        o.method,
        pathOf(o),
        [...(key ? [`Authorization: Bearer ${key}`] : []), "Content-Type: application/json", "Content-Length: 2000000"],
        "{",
      );
      record(o, 413, big.status ?? 0);
      if (readsBody(o)) {
        record(o, 415, await send(api, o, { key, body: "x", headers: { "content-type": "text/plain" } }));
        record(o, 400, await send(api, o, { key, body: "{" }));
      } else if (o.op.parameters?.some((p: Json) => p.in === "query")) {
        const ex = example(o);
        record(o, 400, await send(api, o, { key, path: `${ex.path}${ex.path.includes("?") ? "&" : "?"}unknown=1` }));
      } else if (!isPublic(o) && o.path.includes("{")) {
        const blank = Object.fromEntries((o.path.match(/\{\w+\}/g) ?? []).map((p) => [p.slice(1, -1), " x"]));
        record(o, 400, await send(api, o, { key, path: pathOf(o, blank) }));
      }
      if (!isPublic(o)) {
        // Without a key: 401, whatever the body (an invalid one here).
        record(o, 401, await send(api, o, { key: "", body: readsBody(o) ? "{" : undefined }));
        // Over the per-key limit: a fresh key's first request passes, the next gets 429 (a third, should a minute
        // have begun in between); the body is one the route would refuse after the limit, so nothing is written.
        const fresh = await admin.createKey({
          partnerId: partner.partnerId,
          leadTracking: true,
          test: o.path.startsWith(`${P}/test`),
        });
        let status = 0;
        for (let i = 0; i < 3 && status !== 429; i++)
          status = await send(limited, o, { key: fresh.apiKey, body: readsBody(o) ? "{" : undefined });
        record(o, 429, status);
      }
      if (o.op.responses["503"]) record(o, 503, await send(down, o, { key }));
    }),
  );
  // A buyer's lead over the per-address limit.
  let leadStatus = 0;
  for (let i = 0; i < 3 && leadStatus !== 429; i++) leadStatus = await send(limited, lead);
  record(lead, 429, leadStatus);

  // --- The comparison. -------------------------------------------------------------------------------------------
  const CANNOT = new Set([500]); // a bug: the last-resort answer every operation has
  const mismatches: string[] = [];
  for (const o of operations) {
    const documented = Object.keys(o.op.responses).map(Number).sort();
    const answers = provoked.get(name(o)) ?? new Map<number, number[]>();
    const table = [...new Set([...answers.keys(), ...CANNOT])].sort();
    if (JSON.stringify(documented) !== JSON.stringify(table))
      mismatches.push(`${name(o)}: documented ${documented.join(",")}, the code answers ${table.join(",")}`);
    for (const [wanted, got] of answers)
      for (const g of got) if (wanted !== g) mismatches.push(`${name(o)}: asked for ${wanted}, got ${g}`);
  }
  expect(mismatches).toEqual([]);
  expect(operations.length).toBeGreaterThanOrEqual(33);
  // The examples are real: each route's own answer above has the shape and wording of the document's example.
  expect(unlike).toEqual([]);
}, 180_000);

test("a path answers 405 with Allow to a standard method it does not serve, and 501 to any other method, as the document states", async () => {
  expect(Object.keys(doc.components.responses).sort()).toEqual(["MethodNotAllowed", "MethodNotImplemented"]);
  expect(doc.info.description).toContain("405");
  expect(doc.info.description).toContain("501");
  const patterns = [...new Set(operations.map((o) => o.path))].map((path) => ({
    path,
    regex: new RegExp(`^${path.replace(/\{\w+\}/g, "[^/]+")}$`),
    methods: operations.filter((o) => o.path === path).map((o) => o.method),
  }));
  const wrong: string[] = [];
  for (const { path, methods } of patterns) {
    const concrete = pathOf(operations.find((o) => o.path === path)!);
    // /partner/v1/listings/batch is also the listing "batch": every pattern the path matches serves it, and Allow
    // names the methods of the route that names the path literally.
    const served = new Set(patterns.filter((p) => p.regex.test(concrete)).flatMap((p) => p.methods));
    // Every path under /partner/v1/ needs a key first (the document itself for its own method only).
    const auth = path.startsWith("/partner/v1/") ? [`Authorization: Bearer ${partner.apiKey}`] : [];
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "QUERY"]) {
      if (served.has(method)) continue;
      const res = await raw(api, method, concrete, auth);
      const allow = (res.headers.allow ?? "")
        .split(/,\s*/)
        .filter((m) => m !== "HEAD")
        .sort();
      if (res.status !== 405 || JSON.stringify(allow) !== JSON.stringify([...methods].sort()))
        wrong.push(`${method} ${path}: ${res.status} Allow: ${res.headers.allow}`);
    }
    const other = await raw(api, "PROPFIND", concrete);
    if (other.status !== 501) wrong.push(`PROPFIND ${path}: ${other.status}`);
  }
  expect(wrong).toEqual([]);
}, 60_000);

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await Bun.sleep(50);
  }
}
