// What both chart tests do to a running release (chart-cluster.test.ts: development values; chart-production.test.ts:
// production values): the photo host and the webhook receiver, served by the test process on the node's address
// (the pods reach it there); a partner's and a buyer's requests to the API Service, each on a new connection so
// that requests spread over the ready pods; steady writes while something happens to the release; and the check that
// every acknowledged write converged with no effect applied twice.
import { expect } from "bun:test";
import type postgres from "postgres";
import { sample } from "../../../services/api/test/support/harness.ts";
import { makePicture } from "../../../services/media/test/support/image-server.ts";
import { until } from "../../support/until.ts";

export interface Delivery {
  id: string;
  type: string;
  listing: number;
}

export interface Mail {
  id: string;
  to: string[];
}

export interface Acked {
  id: number;
  word: string;
}

const seconds = (t0: number) => Math.round((Date.now() - t0) / 100) / 10;

/** The photo host and webhook receiver on 0.0.0.0 (the node's address), and the partner/buyer side of the API. */
export async function startJourney(opts: { nodeIp: string; token: string }) {
  const pictures: Buffer[] = [];
  for (let i = 0; i < 8; i++)
    pictures.push(await makePicture(640, 480, "jpeg", { colour: { r: 30 * i, g: 255 - 30 * i, b: (90 * i) % 256 } }));
  const deliveries: Delivery[] = [];
  const photoHost = Bun.serve({
    hostname: "0.0.0.0",
    port: 0,
    fetch(req) {
      const n = Number(/(\d+)\.jpg$/.exec(new URL(req.url).pathname)?.[1] ?? 0);
      return new Response(pictures[n % pictures.length], { headers: { "content-type": "image/jpeg" } });
    },
  });
  const receiver = Bun.serve({
    hostname: "0.0.0.0",
    port: 0,
    async fetch(req) {
      const body = (await req.json().catch(() => ({}))) as { type?: string; data?: { serviceListingId?: number } };
      deliveries.push({
        id: req.headers.get("webhook-id") ?? "",
        type: body.type ?? "",
        listing: Number(body.data?.serviceListingId ?? 0),
      });
      return new Response(null, { status: 204 });
    },
  });
  const token = opts.token;
  const brokerEmail = `leads-${token}@broker.example`;
  const brokerId = `broker-${token}`;
  const state = { apiBase: "", apiKey: "" };

  /** A request to the API Service, each on a new connection: every request is balanced across the ready pods. */
  function api(path: string, init: RequestInit & { key?: string } = {}): Promise<Response> {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      connection: "close",
      ...(init.key ? { authorization: `Bearer ${init.key}` } : {}),
    };
    return fetch(`${state.apiBase}${path}`, {
      ...init,
      headers,
      keepalive: false,
      signal: AbortSignal.timeout(15_000),
    });
  }

  async function putListing(
    externalId: string,
    title: string,
    photos: string[],
  ): Promise<{ id: number | null; status: number }> {
    const res = await api(`/partner/v1/listings/${externalId}`, {
      method: "PUT",
      key: state.apiKey,
      body: JSON.stringify(
        sample.listing(brokerId, {
          title,
          photos: photos.map((p, i) => ({ url: `http://${opts.nodeIp}:${photoHost.port}/${p}.jpg`, sortKey: i + 1 })),
        }),
      ),
    }).catch(() => null);
    if (res?.status !== 201) return { id: null, status: res?.status ?? 0 };
    return { id: ((await res.json()) as { serviceListingId: number }).serviceListingId, status: 201 };
  }

  async function searchable(word: string, id: number): Promise<boolean> {
    const res = await api(`/v1/listings?q=${encodeURIComponent(word)}`);
    if (res.status !== 200) return false;
    const body = (await res.json()) as { results: { serviceListingId: number }[] };
    return body.results.some((r) => r.serviceListingId === id);
  }

  /** A buyer's lead: its status (202 accepted; 0: no answer). */
  async function sendLead(listingId: number, n: number): Promise<number> {
    const res = await api(`/v1/listings/${listingId}/leads`, {
      method: "POST",
      body: JSON.stringify({ name: `Buyer ${n}`, email: `buyer${n}@example.com`, message: `Lead ${n} for ${token}` }),
    }).catch(() => null);
    return res?.status ?? 0;
  }

  /** The partner's webhook endpoint (to the receiver) and broker (whose leads go to brokerEmail). */
  async function setUpPartner(apiBase: string, apiKey: string): Promise<void> {
    state.apiBase = apiBase;
    state.apiKey = apiKey;
    const endpoint = await api(`/partner/v1/webhook-endpoints/hooks-${token}`, {
      method: "PUT",
      key: apiKey,
      body: JSON.stringify({
        url: `http://${opts.nodeIp}:${receiver.port}/hooks`,
        events: ["listing.published", "listing.media.processed", "lead.received"],
      }),
    });
    expect(endpoint.status).toBe(201);
    const broker = await api(`/partner/v1/brokers/${brokerId}`, {
      method: "PUT",
      key: apiKey,
      body: JSON.stringify(sample.broker({ forwardingEmail: brokerEmail })),
    });
    expect(broker.status).toBe(201);
  }

  /**
   * The journey: a listing with two photos becomes searchable, both photos get their variants (each in the object
   * store: `stored` lists its names) and one is served by the API, the listing.published webhook arrives, and a
   * buyer's lead is e-mailed to the broker exactly once. The listing's id.
   */
  async function journey(opts2: {
    sql: postgres.Sql;
    stored: () => Promise<Set<string>>;
    mails: () => Promise<Mail[]>;
  }) {
    const { id } = await putListing(`first-${token}`, `Corner bakery ${token}first`, ["first-1", "first-2"]);
    expect(id).not.toBeNull();
    await until("the listing to be searchable", () => searchable(`${token}first`, id!), 120_000);
    const rows = await until(
      "both photos to be ready",
      async () => {
        const r = await opts2.sql<{ state: string; variants: { key: string }[] }[]>`
          SELECT state, variants FROM listing_photos WHERE listing_id = ${id!}`;
        return r.length === 2 && r.every((row) => row.state === "ready") ? r : null;
      },
      120_000,
    );
    const names = rows.flatMap((r) => r.variants.map((v) => v.key));
    expect(names.length).toBeGreaterThanOrEqual(2);
    const stored = await opts2.stored();
    for (const name of names) expect([name, stored.has(name)]).toEqual([name, true]);
    const variant = await api(`/media/${names[0]}`);
    expect(variant.status).toBe(200);
    expect((await variant.arrayBuffer()).byteLength).toBeGreaterThan(100);

    await until(
      "the listing.published webhook",
      async () => deliveries.some((d) => d.type === "listing.published" && d.listing === id),
      90_000,
    );
    expect(await sendLead(id!, 0)).toBe(202);
    const mine = async () => (await opts2.mails()).filter((m) => m.to.includes(brokerEmail));
    await until("the lead's e-mail", async () => (await mine()).length > 0, 90_000);
    await Bun.sleep(3_000); // a duplicate would arrive now
    expect((await mine()).length).toBe(1);
    return id!;
  }

  /** Steady writes for `ms` (a listing with two photos every 500 ms, a lead for every third); what was acknowledged. */
  async function steadyWrites(label: string, ms: number, during: () => Promise<void>) {
    const t0 = Date.now();
    const acked: Acked[] = [];
    const leads: number[] = [];
    const failures: number[] = [];
    let attempted = 0;
    let stopAt = t0 + ms;
    const writer = (async () => {
      for (let n = 1; Date.now() < stopAt; n++) {
        const tick = Date.now();
        attempted++;
        const word = `${token}${label}${n}`;
        const { id, status } = await putListing(`${label}-${token}-${n}`, `Steady listing ${word}`, [
          `${label}-${n}-a-${n % 8}`,
          `${label}-${n}-b-${(n + 3) % 8}`,
        ]);
        if (id === null) failures.push(status);
        else {
          acked.push({ id, word });
          if (n % 3 === 0) {
            const lead = await sendLead(id, n);
            if (lead === 202) leads.push(id);
            else failures.push(lead);
          }
        }
        await Bun.sleep(Math.max(0, 500 - (Date.now() - tick)));
      }
    })();
    try {
      await during();
    } finally {
      stopAt = Math.min(stopAt, Date.now() + ms); // at least until the planned end, never forever
    }
    await writer;
    return { acked, leads, failures, attempted, seconds: seconds(t0) };
  }

  /**
   * Every acknowledged write converges (photos ready, searchable, both webhooks, every lead's e-mail), and no effect
   * happened twice. `mails`: the broker's messages so far; `leadsBefore`: how many there were before these writes.
   */
  async function expectConverged(opts2: {
    sql: postgres.Sql;
    acked: Acked[];
    leadsBefore: number;
    leads: number[];
    mails: () => Promise<Mail[]>;
  }) {
    const ids = opts2.acked.map((a) => a.id);
    await until(
      "every acknowledged listing's photos to be ready",
      async () => {
        const [row] = await opts2.sql<{ ready: number; total: number }[]>`
          SELECT count(*) FILTER (WHERE state = 'ready')::int AS ready, count(*)::int AS total
          FROM listing_photos WHERE listing_id = ANY(${ids})`;
        return row!.ready === ids.length * 2 && row!.total === ids.length * 2;
      },
      180_000,
    );
    const missing = new Set(opts2.acked);
    await until(
      "every acknowledged listing to be searchable",
      async () => {
        for (const a of [...missing]) if (await searchable(a.word, a.id)) missing.delete(a);
        return missing.size === 0;
      },
      180_000,
    );
    await until(
      "every listing.published and listing.media.processed webhook",
      async () =>
        ids.every(
          (id) =>
            deliveries.some((d) => d.listing === id && d.type === "listing.published") &&
            deliveries.some((d) => d.listing === id && d.type === "listing.media.processed"),
        ),
      180_000,
    );
    const mine = async () => (await opts2.mails()).filter((m) => m.to.includes(brokerEmail));
    await until(
      "every lead's e-mail",
      async () => (await mine()).length >= opts2.leadsBefore + opts2.leads.length,
      180_000,
    );
    await Bun.sleep(5_000); // late duplicates would arrive now
    for (const type of ["listing.published", "listing.media.processed"]) {
      const perListing = ids.map(
        (id) => new Set(deliveries.filter((d) => d.listing === id && d.type === type).map((d) => d.id)).size,
      );
      expect([type, perListing.filter((c) => c !== 1).length]).toEqual([type, 0]);
    }
    const mails = await mine();
    expect(mails.length).toBe(opts2.leadsBefore + opts2.leads.length);
    expect(new Set(mails.map((m) => m.id)).size).toBe(mails.length);
  }

  return {
    token,
    brokerEmail,
    brokerId,
    deliveries,
    photoHost,
    receiver,
    api,
    putListing,
    searchable,
    sendLead,
    setUpPartner,
    journey,
    steadyWrites,
    expectConverged,
    stop() {
      photoHost.stop(true);
      receiver.stop(true);
    },
  };
}

export type Journey = Awaited<ReturnType<typeof startJourney>>;
