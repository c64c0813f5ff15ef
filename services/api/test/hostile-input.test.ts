// Every case found by trying the API as an attacker would (issue 10, "Found by trying it"): each gets a JSON
// error with the right status and a request ID, never a 5xx, and nothing already stored changes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { MAX_JSON_DEPTH } from "@pss/contracts";
import { call, sample, startApi, type ApiHarness, type Partner, type TestResponse } from "./support/harness.ts";
import { sendRaw, type RawResponse } from "./support/raw-http.ts";

let api: ApiHarness;
let partner: Partner;
let port: number;
const BROKER = "hostile-broker";
const LISTING = "hostile-listing";
let brokerBefore: Record<string, unknown>;
let listingBefore: Record<string, unknown>;
let listingId: number;

beforeAll(async () => {
  api = await startApi({ relay: false });
  port = Number(new URL(api.baseUrl).port);
  partner = await api.createPartner();
  expect((await partner.put(`/partner/v1/brokers/${BROKER}`, sample.broker())).status).toBe(201);
  const created = await partner.put(`/partner/v1/listings/${LISTING}`, sample.listing(BROKER));
  expect(created.body).toMatchObject({ status: "success" });
  brokerBefore = await brokerView();
  listingBefore = await listingView();
  listingId = (await partner.get(`/partner/v1/listings/${LISTING}`)).body.listing.serviceListingId;
});
afterAll(() => api.stop());

function expectJsonError(res: TestResponse, status: number, mentions?: string | RegExp) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.headers.get("x-request-id")).toBeTruthy();
  expect(res.body.status).toBe("error");
  expect(typeof res.body.error).toBe("string");
  expect(res.body.error.length).toBeGreaterThan(5);
  if (mentions) expect(res.body.error).toMatch(mentions);
}

function expectRawJsonError(res: RawResponse, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  expect(res.headers["x-request-id"]).toBeTruthy();
  expect(res.json?.status).toBe("error");
  expect(typeof res.json?.error).toBe("string");
}

// What the partner wrote (background workers may fill in derived fields such as descriptionOptimized meanwhile).
const BROKER_FIELDS = [
  "name",
  "email",
  "phone",
  "avatarUrl",
  "forwardingEmail",
  "profile",
  "licenses",
  "serviceAreas",
  "updatedAt",
];
const LISTING_FIELDS = [
  "brokerExternalId",
  "status",
  "businessType",
  "location",
  "title",
  "description",
  "establishedAt",
  "financials",
  "property",
  "financing",
  "updatedAt",
];
const pick = (record: Record<string, unknown>, fields: string[]) =>
  Object.fromEntries(fields.map((f) => [f, record[f]]));
const brokerView = async () => pick((await partner.get(`/partner/v1/brokers/${BROKER}`)).body.broker, BROKER_FIELDS);
const listingView = async (): Promise<Record<string, unknown>> => {
  const listing = (await partner.get(`/partner/v1/listings/${LISTING}`)).body.listing;
  return {
    ...pick(listing, LISTING_FIELDS),
    photos: listing.photos.map((p: { url: string; sortKey: number }) => [p.url, p.sortKey]),
  };
};

async function expectNothingChanged() {
  expect(await brokerView()).toEqual(brokerBefore);
  expect(await listingView()).toEqual(listingBefore);
  expect((await partner.get("/partner/v1/brokers/hostile-new")).status).toBe(404);
  expect((await partner.get("/partner/v1/listings/hostile-new")).status).toBe(404);
}

/** PUTs raw JSON text (so escapes such as \u0000 or a lone \ud800 reach the server as sent). */
function putText(path: string, text: string, headers: Record<string, string> = {}) {
  return call(api.baseUrl, "PUT", path, {
    key: partner.apiKey,
    body: text,
    headers: { "content-type": "application/json", ...headers },
  });
}

describe("text the database cannot store or nobody should send", () => {
  const cases: [string, string, string, string][] = [
    [
      "a NUL in a listing title",
      `/partner/v1/listings/${LISTING}`,
      JSON.stringify(sample.listing(BROKER, { title: "Taco\u0000shop" })),
      "title",
    ],
    [
      "a NUL in a broker name",
      `/partner/v1/brokers/${BROKER}`,
      JSON.stringify(sample.broker({ name: "Jane\u0000Broker" })),
      "name",
    ],
    [
      "a NUL in brokerExternalId",
      "/partner/v1/listings/hostile-new",
      JSON.stringify(sample.listing("x\u0000y")),
      "brokerExternalId",
    ],
    [
      "a NUL in an inline broker's e-mail",
      "/partner/v1/listings/hostile-new",
      JSON.stringify(
        sample.listing(BROKER, {
          brokerExternalId: undefined,
          broker: { externalBrokerId: "hostile-new", name: "N", email: "n\u0000@example.com" },
        }),
      ),
      "broker.email",
    ],
    [
      "a lone high surrogate in a title",
      `/partner/v1/listings/${LISTING}`,
      JSON.stringify(sample.listing(BROKER)).replace('"title":"Profitable', '"title":"x\\ud800y'),
      "title",
    ],
    [
      "a lone low surrogate in a broker name",
      `/partner/v1/brokers/${BROKER}`,
      JSON.stringify(sample.broker()).replace('"name":"Jane', '"name":"\\udc00Jane'),
      "name",
    ],
    [
      "a control character in a field name",
      `/partner/v1/brokers/${BROKER}`,
      JSON.stringify({ ...sample.broker(), "na\u0001me": "x" }),
      "field name",
    ],
    [
      "a tab in a single-line field",
      `/partner/v1/brokers/${BROKER}`,
      JSON.stringify(sample.broker({ name: "Jane\tBroker" })),
      "name",
    ],
    [
      "DEL (U+007F) in a city",
      `/partner/v1/listings/${LISTING}`,
      JSON.stringify(
        sample.listing(BROKER, {
          location: { city: "Aus\u007ftin", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" },
        }),
      ),
      "location.city",
    ],
  ];
  for (const [name, path, text, field] of cases) {
    test(`${name} is refused with 400 naming the field, and nothing changes`, async () => {
      const res = await putText(path, text);
      expectJsonError(res, 400, field);
      await expectNothingChanged();
    });
  }

  // "batch" is a valid external ID: its PUT is a single upsert, under the same text rules as any other (the batch
  // route that checks its items' text itself is POST only).
  test("a NUL in the title of the listing whose external ID is 'batch' (PUT …/listings/batch) is 400 naming the field", async () => {
    const res = await putText(
      "/partner/v1/listings/batch",
      JSON.stringify(sample.listing(BROKER, { title: "Taco\u0000shop" })),
    );
    expectJsonError(res, 400, "title");
    expect((await partner.get("/partner/v1/listings/batch")).status).toBe(404);
  });

  test("a NUL in the name of the broker whose external ID is 'batch' (PUT …/brokers/batch) is 400 naming the field", async () => {
    const res = await putText("/partner/v1/brokers/batch", JSON.stringify(sample.broker({ name: "Jane\u0000Broker" })));
    expectJsonError(res, 400, "name");
    expect((await partner.get("/partner/v1/brokers/batch")).status).toBe(404);
  });

  test("a NUL in one batch item's title answers that item 400 naming the field; the other item is written", async () => {
    const ok = "hostile-batch-ok";
    const res = await call(api.baseUrl, "POST", "/partner/v1/listings/batch", {
      key: partner.apiKey,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        items: [
          { externalListingId: "hostile-batch-nul", listing: sample.listing(BROKER, { title: "Taco\u0000shop" }) },
          { externalListingId: ok, listing: sample.listing(BROKER) },
        ],
      }),
    });
    expect(res.status).toBe(200);
    expect(res.body.results[0]).toMatchObject({ externalListingId: "hostile-batch-nul", httpStatus: 400 });
    expect(res.body.results[0].body.error).toMatch(/title/);
    expect(res.body.results[1]).toMatchObject({ externalListingId: ok, httpStatus: 201 });
    expect((await partner.get("/partner/v1/listings/hostile-batch-nul")).status).toBe(404);
  });

  test("a NUL in a batch item's external ID or in the envelope is answered 4xx, never 500", async () => {
    const post = (body: unknown) =>
      call(api.baseUrl, "POST", "/partner/v1/brokers/batch", {
        key: partner.apiKey,
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const item = await post({ items: [{ externalBrokerId: "x\u0000y", broker: sample.broker() }] });
    expect(item.status).toBe(200);
    expect(item.body.results[0]).toMatchObject({ httpStatus: 400 });
    const envelope = await post({ items: [], "no\u0000te": 1 });
    expectJsonError(envelope, 400);
  });

  test("tabs and line breaks are accepted in multi-line fields (description, bio), and an emoji anywhere", async () => {
    const listing = await partner.put(
      "/partner/v1/listings/hostile-multiline",
      sample.listing(BROKER, { title: "Tacos 🌮", description: "Line one\nLine two\r\n\tIndented" }),
    );
    expect(listing.status).toBe(201);
    const read = await partner.get("/partner/v1/listings/hostile-multiline");
    expect(read.body.listing.title).toBe("Tacos 🌮");
    expect(read.body.listing.description).toBe("Line one\nLine two\r\n\tIndented");
    const broker = await partner.put(
      "/partner/v1/brokers/hostile-multiline",
      sample.broker({ profile: { bio: "Para one.\n\nPara two." } }),
    );
    expect(broker.status).toBe(201);
  });
});

describe("shapes the schema allowed but the server could not store", () => {
  test("licenses: [{}] on a broker is 400 naming licenses[0], and nothing changes", async () => {
    const res = await partner.put(`/partner/v1/brokers/${BROKER}`, sample.broker({ licenses: [{}] }));
    expectJsonError(res, 400, "licenses[0]");
    await expectNothingChanged();
  });

  test("licenses: [{}] on an inline broker is 400 too", async () => {
    const res = await partner.put(
      "/partner/v1/listings/hostile-new",
      sample.listing(BROKER, {
        brokerExternalId: undefined,
        broker: { externalBrokerId: "hostile-new", name: "N", email: "n@example.com", licenses: [{}] },
      }),
    );
    expectJsonError(res, 400, "licenses[0]");
    await expectNothingChanged();
  });
});

describe("deeply nested JSON", () => {
  const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
  test("~400,000 levels on PUT listing (under the body limit) is 400, not a stack overflow", async () => {
    const text = `{"title":${nested(400_000)}}`;
    expect(text.length).toBeLessThan(1_048_576);
    expectJsonError(await putText(`/partner/v1/listings/${LISTING}`, text), 400, /nested too deeply/);
    await expectNothingChanged();
  });

  test("~10,000 levels on the public lead intake is 400", async () => {
    const res = await call(api.baseUrl, "POST", `/v1/listings/${listingId}/leads`, {
      body: `{"name":${nested(10_000)}}`,
    });
    expectJsonError(res, 400, /nested too deeply/);
  });

  test(`exactly ${MAX_JSON_DEPTH} levels is not refused for depth (the schema then judges it)`, async () => {
    const res = await putText(`/partner/v1/brokers/${BROKER}`, `{"name":${nested(MAX_JSON_DEPTH - 1)}}`);
    expectJsonError(res, 400);
    expect(res.body.error).not.toMatch(/nested/);
  });

  test("brackets inside strings do not count as nesting", async () => {
    const res = await partner.put(
      "/partner/v1/listings/hostile-brackets",
      sample.listing(BROKER, { description: '[[[[[[[[[[[[[[[[[[[[[[[[{{{{{{{{{{{{{{{{{{{{ \\" ]]]' }),
    );
    expect(res.status).toBe(201);
  });
});

describe("bytes and encodings", () => {
  test("invalid UTF-8 in a body is refused with 400 instead of being stored with replacement characters", async () => {
    const prefix = new TextEncoder().encode(`{"name":"Jane `);
    const suffix = new TextEncoder().encode(`","email":"jane@example.com"}`);
    const body = new Uint8Array([...prefix, 0xff, 0xfe, ...suffix]);
    const res = await fetch(`${api.baseUrl}/partner/v1/brokers/${BROKER}`, {
      method: "PUT",
      body,
      headers: { authorization: `Bearer ${partner.apiKey}`, "content-type": "application/json" },
    });
    expectJsonError({ status: res.status, headers: res.headers, body: await res.json() }, 400, /UTF-8/);
    await expectNothingChanged();
  });

  test("a Content-Encoding the API does not decode is 415, not ignored", async () => {
    const body = gzipSync(JSON.stringify(sample.broker({ name: "Zipped" })));
    const res = await fetch(`${api.baseUrl}/partner/v1/brokers/${BROKER}`, {
      method: "PUT",
      body,
      headers: {
        authorization: `Bearer ${partner.apiKey}`,
        "content-type": "application/json",
        "content-encoding": "gzip",
      },
    });
    expectJsonError({ status: res.status, headers: res.headers, body: await res.json() }, 415, /Content-Encoding/);
    await expectNothingChanged();
  });

  test("a body over the runtime's old ~2 MiB cut-off gets our JSON 413 (by Content-Length and chunked)", async () => {
    const big = JSON.stringify(sample.broker({ name: "x".repeat(3 * 1024 * 1024) }));
    expectJsonError(await putText(`/partner/v1/brokers/${BROKER}`, big), 413, /1048576 bytes/);
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const res = await fetch(`${api.baseUrl}/partner/v1/brokers/${BROKER}`, {
      method: "PUT",
      body: stream,
      headers: { authorization: `Bearer ${partner.apiKey}`, "content-type": "application/json" },
    });
    expectJsonError({ status: res.status, headers: res.headers, body: await res.json() }, 413);
    await expectNothingChanged();
  });
});

describe("requests without a Host header and other raw requests", () => {
  test("HTTP/1.0 GET /partner/v1/health without Host and without a key is 401, not 200", async () => {
    const res = await sendRaw(port, "GET /partner/v1/health HTTP/1.0\r\n\r\n");
    expectRawJsonError(res, 401);
    expect(res.json.error).toBe("Unauthorized");
  });

  test("HTTP/1.0 without Host but with a valid key works like any request", async () => {
    const res = await sendRaw(
      port,
      `GET /partner/v1/health HTTP/1.0\r\nAuthorization: Bearer ${partner.apiKey}\r\n\r\n`,
    );
    expect(res.status).toBe(200);
    expect(res.json.status).toBe("success");
  });

  test("HTTP/1.0 without Host to an unknown path is a small JSON 404, never the runtime's HTML error page", async () => {
    const res = await sendRaw(port, "GET /no/such/path HTTP/1.0\r\n\r\n");
    expectRawJsonError(res, 404);
    expect(res.body.length).toBeLessThan(200);
    expect(res.raw).not.toContain("<html");
  });

  test('a very short Host ("a", "api") is routed to the right path', async () => {
    for (const host of ["a", "api", "ab.c"]) {
      const res = await sendRaw(
        port,
        `GET /partner/v1/health HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${partner.apiKey}\r\nConnection: close\r\n\r\n`,
      );
      expect({ host, status: res.status }).toEqual({ host, status: 200 });
    }
  });

  test("an unknown path under /partner/v1/ without a key is 401 (the guard covers the whole prefix)", async () => {
    expectRawJsonError(await sendRaw(port, "GET /partner/v1/nope HTTP/1.0\r\n\r\n"), 401);
  });

  test("a non-standard method the runtime knows (PROPFIND, MKCOL) is 501 JSON", async () => {
    for (const method of ["PROPFIND", "MKCOL"]) {
      expectRawJsonError(
        await sendRaw(port, `${method} /partner/v1/health HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`),
        501,
      );
    }
  });

  test("TRACE and QUERY on a known path are 405 with Allow (standard methods the path does not support)", async () => {
    const query = await sendRaw(
      port,
      `QUERY /partner/v1/health HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${partner.apiKey}\r\nConnection: close\r\n\r\n`,
    );
    expectRawJsonError(query, 405);
    const res = await sendRaw(
      port,
      `TRACE /partner/v1/health HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${partner.apiKey}\r\nConnection: close\r\n\r\n`,
    );
    expectRawJsonError(res, 405);
    expect(res.headers.allow).toContain("GET");
  });

  test("a request target over 8 KiB is 414 JSON", async () => {
    expectRawJsonError(
      await sendRaw(
        port,
        `GET /partner/v1/listings?cursor=${"a".repeat(9000)} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`,
      ),
      414,
    );
  });

  test("headers over 16 KiB in all are 431 JSON", async () => {
    // The test process runs with the same BUN_OPTIONS header limit as the deployed API (scripts/test.ts).
    expectRawJsonError(
      await sendRaw(
        port,
        `GET /partner/v1/health HTTP/1.1\r\nHost: a\r\nX-Big: ${"b".repeat(20_000)}\r\nConnection: close\r\n\r\n`,
      ),
      431,
    );
  });

  test("framing the runtime's parser refuses before the API sees it (bad Content-Length, Content-Length with chunked, an unknown method token): answered or closed, and the API keeps serving", async () => {
    // Documented in docs/api-internals.md ("Limits of the runtime"): Bun answers these itself, without a body.
    const badLength = await sendRaw(
      port,
      "PUT /partner/v1/brokers/x HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n",
    );
    expect(badLength.status).toBe(400);
    const smuggling = await sendRaw(
      port,
      "PUT /partner/v1/brokers/x HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    );
    expect(smuggling.status).toBe(400);
    const brew = await sendRaw(port, "BREW /coffee HTTP/1.1\r\nHost: a\r\n\r\n", 500);
    expect(brew.status === null || brew.status >= 400).toBe(true);
    const after = await sendRaw(
      port,
      `GET /partner/v1/health HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${partner.apiKey}\r\nConnection: close\r\n\r\n`,
    );
    expect(after.status).toBe(200);
    await expectNothingChanged();
  });
});
