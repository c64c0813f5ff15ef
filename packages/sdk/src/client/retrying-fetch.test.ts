import { describe, expect, test } from "bun:test";
import { PssNetworkError } from "./errors.ts";
import { backoffDelay, createRetryingFetch, isRetryableStatus, type RetryInfo } from "./retrying-fetch.ts";

/** A scripted transport: each call takes the next answer (a status with headers, or an error to throw). */
function scripted(answers: ({ status: number; headers?: Record<string, string> } | Error)[]) {
  const seen: { method: string; body: string }[] = [];
  const inner = async (request: Request) => {
    seen.push({ method: request.method, body: await request.text() });
    const next = answers.shift();
    if (!next) throw new Error("no more answers scripted");
    if (next instanceof Error) throw next;
    return new Response(JSON.stringify({ status: next.status < 400 ? "success" : "error" }), {
      status: next.status,
      headers: next.headers,
    });
  };
  return { inner, seen };
}

function recorder() {
  const waits: number[] = [];
  const retries: RetryInfo[] = [];
  return {
    waits,
    retries,
    sleep: async (ms: number) => void waits.push(ms),
    onRetry: (i: RetryInfo) => void retries.push(i),
  };
}

const put = () =>
  new Request("http://api.test/partner/v1/listings/a", {
    method: "PUT",
    body: JSON.stringify({ status: "FOR_SALE" }),
    headers: { "content-type": "application/json" },
  });

describe("backoff", () => {
  test("full jitter: attempt n waits uniformly below min(cap, base * 2^(n-1))", () => {
    const opts = { baseDelayMs: 100, maxDelayMs: 1000 };
    expect(backoffDelay(1, opts, () => 0.999)).toBe(99);
    expect(backoffDelay(3, opts, () => 0.5)).toBe(200);
    expect(backoffDelay(10, opts, () => 0.999)).toBe(999);
    expect(backoffDelay(4, opts, () => 0)).toBe(0);
  });

  test("network errors, 408, 429 and 5xx are retryable; other 4xx, 501 and 505 are not", () => {
    for (const s of [408, 429, 500, 502, 503, 504, 599]) expect(isRetryableStatus(s)).toBe(true);
    for (const s of [200, 400, 401, 404, 409, 413, 501, 505]) expect(isRetryableStatus(s)).toBe(false);
  });
});

describe("retrying fetch", () => {
  test("a PUT answered 503 then 201 is sent again with the same body, and the 201 is returned", async () => {
    const { inner, seen } = scripted([{ status: 503 }, { status: 502 }, { status: 201 }]);
    const r = recorder();
    const fetchWithRetries = createRetryingFetch(inner, {
      sleep: r.sleep,
      onRetry: r.onRetry,
      random: () => 0.5,
      baseDelayMs: 100,
    });
    const res = await fetchWithRetries(put());
    expect(res.status).toBe(201);
    expect(seen.map((s) => s.body)).toEqual(Array(3).fill('{"status":"FOR_SALE"}'));
    expect(r.waits).toEqual([50, 100]);
    expect(r.retries.map((i) => [i.attempt, i.status])).toEqual([
      [1, 503],
      [2, 502],
    ]);
  });

  test("a 429 waits at least Retry-After seconds before the next attempt", async () => {
    const { inner } = scripted([{ status: 429, headers: { "retry-after": "3" } }, { status: 200 }]);
    const r = recorder();
    const res = await createRetryingFetch(inner, { sleep: r.sleep, onRetry: r.onRetry, random: () => 0.1 })(put());
    expect(res.status).toBe(200);
    expect(r.waits).toEqual([3000]);
    expect(r.retries[0]!.retryAfterMs).toBe(3000);
  });

  test("a Retry-After longer than the limit is not waited for: the 429 is returned", async () => {
    const { inner } = scripted([{ status: 429, headers: { "retry-after": "600" } }]);
    const r = recorder();
    const res = await createRetryingFetch(inner, { sleep: r.sleep, maxRetryAfterMs: 60_000 })(put());
    expect(res.status).toBe(429);
    expect(r.waits).toEqual([]);
  });

  test("network errors are retried, and after the last attempt become a PssNetworkError", async () => {
    const refused = Object.assign(new Error("Unable to connect"), { code: "ECONNREFUSED" });
    const { inner, seen } = scripted([refused, refused, refused]);
    const r = recorder();
    const call = createRetryingFetch(inner, { sleep: r.sleep, maxAttempts: 3, random: () => 0 })(put());
    const err = await call.catch((e) => e);
    expect(err).toBeInstanceOf(PssNetworkError);
    expect(err.message).toContain("ECONNREFUSED");
    expect(err.message).toContain("after 3 attempts");
    expect(seen).toHaveLength(3);
  });

  test("400, 401 and 404 are answers, not failures to retry", async () => {
    for (const status of [400, 401, 404]) {
      const { inner, seen } = scripted([{ status }]);
      const res = await createRetryingFetch(inner, { sleep: async () => {} })(put());
      expect(res.status).toBe(status);
      expect(seen).toHaveLength(1);
    }
  });

  test("a POST is retried on 429 only: after a 500 or a lost connection it may have been processed", async () => {
    const post = () => new Request("http://api.test/v1/listings/1/leads", { method: "POST", body: "{}" });
    const a = scripted([{ status: 500 }]);
    expect((await createRetryingFetch(a.inner, { sleep: async () => {} })(post())).status).toBe(500);
    expect(a.seen).toHaveLength(1);
    const b = scripted([new Error("socket hang up")]);
    expect(await createRetryingFetch(b.inner, { sleep: async () => {} })(post()).catch((e) => e)).toBeInstanceOf(
      PssNetworkError,
    );
    expect(b.seen).toHaveLength(1);
    const c = scripted([{ status: 429, headers: { "retry-after": "1" } }, { status: 202 }]);
    expect((await createRetryingFetch(c.inner, { sleep: async () => {} })(post())).status).toBe(202);
  });

  test("the last answer is returned when every attempt is retryable", async () => {
    const { inner, seen } = scripted([{ status: 503 }, { status: 503 }]);
    const res = await createRetryingFetch(inner, { sleep: async () => {}, maxAttempts: 2 })(put());
    expect(res.status).toBe(503);
    expect(seen).toHaveLength(2);
  });

  test("an attempt that gets no answer in time counts as a network error and is retried", async () => {
    let calls = 0;
    const inner = (request: Request) => {
      calls += 1;
      if (calls === 2) return Promise.resolve(new Response("{}", { status: 200 }));
      return new Promise<Response>((_, reject) =>
        request.signal.addEventListener("abort", () => reject(request.signal.reason)),
      );
    };
    const res = await createRetryingFetch(inner, { attemptTimeoutMs: 50, sleep: async () => {} })(put());
    expect(res.status).toBe(200);
    expect(calls).toBe(2);
  });

  test("the caller's abort stops at once, without further attempts", async () => {
    const controller = new AbortController();
    const { inner, seen } = scripted([{ status: 503 }, { status: 503 }, { status: 503 }]);
    const sleep = async () => void controller.abort(new Error("stopped by the caller"));
    const request = new Request(put(), { signal: controller.signal });
    const err = await createRetryingFetch(inner, { sleep, maxAttempts: 5 })(request).catch((e) => e);
    expect(seen.length).toBeLessThanOrEqual(2);
    expect(String(err?.message ?? err)).toContain("stopped by the caller");
  });
});
