// The idempotency layer (issue 37, item 4; docs/partner-api.md "Idempotency-Key"): a POST sent again (by a client
// that saw no answer, or by a balancer) with the same key has no second effect and gets the first answer again.
//
// How: the request runs inside one PostgreSQL transaction that first inserts the key's row, and every statement the
// handler runs through the layer's `sql` goes into that transaction (an AsyncLocalStorage names it; a handler's own
// `sql.begin` becomes a savepoint). The answer is written to the row before the commit, so the key, the effect and
// the answer are committed together or not at all: a retry finds either nothing (the first attempt left no trace and
// this one runs) or the answer. A concurrent request with the same key waits on the uncommitted row and then gets
// the answer. Only answers below 400 are kept; an error rolls the transaction back (it had no effect), so the same
// key may be sent again. The handlers need no change: they are wrapped (`idempotent()`), whatever they do inside.
import { AsyncLocalStorage } from "node:async_hooks";
import { createHash } from "node:crypto";
import type { SecretBox } from "@pss/service-kit";
import type { Server } from "bun";
import type postgres from "postgres";
import { ContendedWriteError, isRetryableConflict } from "../records/transaction-retry.ts";
import { ApiError, BadRequestError } from "./errors.ts";

/** Default of IDEMPOTENCY_KEY_RETENTION_HOURS: how long an answer is kept for a key. */
export const DEFAULT_IDEMPOTENCY_RETENTION_HOURS = 24;
export const IDEMPOTENCY_KEY_RULE =
  "Idempotency-Key must be 1-255 visible ASCII characters (a random UUID per request is a good choice)";
/** The header a replayed answer carries. */
export const REPLAYED_HEADER = "idempotent-replayed";
const MAX_KEY_LENGTH = 255;
/** Attempts of the whole transaction after a deadlock or serialization failure. */
const ATTEMPTS = 4;
/** 25P02: a statement of the transaction failed earlier (a deadlock a handler's own retry swallowed). */
const ABORTED_TRANSACTION = "25P02";

export class IdempotencyKeyReusedError extends ApiError {
  constructor() {
    super(
      422,
      "This Idempotency-Key was already used with a different request (method, path, query or body); use a new key for a new request",
    );
  }
}

/** The key a request carries: null when it carries none; 400 when it is not a valid key. */
export function parseIdempotencyKey(raw: string | null): string | null {
  if (raw === null) return null;
  // RFC draft (httpapi-idempotency-key-header): a structured-field string, "…"; a bare token is accepted as well.
  const key = /^"(.*)"$/.test(raw) ? raw.slice(1, -1) : raw;
  if (key.length < 1 || key.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key))
    throw new BadRequestError(IDEMPOTENCY_KEY_RULE);
  return key;
}

/** What makes two requests "the same": method, path with query, and body. */
export function requestFingerprint(method: string, pathAndQuery: string, body: unknown): Buffer {
  return createHash("sha256")
    .update(`${method}\n${pathAndQuery}\n`)
    .update(body === undefined || body === null ? "" : JSON.stringify(body))
    .digest();
}

/** Whose keys a key is among: one API key's, or one client address's (public routes). */
export const keyScope = {
  apiKey: (keyId: string) => `k:${keyId}`,
  address: (bucket: string) => `a:${bucket}`,
};

export interface IdempotencyClaim {
  scope: string;
  key: string;
  fingerprint: Buffer;
  /** The answer holds a secret (a rotated webhook secret): stored encrypted. */
  sealed?: boolean;
}

export interface IdempotentAnswer {
  status: number;
  body: unknown;
}

interface Ambient {
  tx: postgres.TransactionSql;
  /** False once the request's transaction ended: work that outlives it uses the pool again. */
  open: boolean;
  /** Savepoints run one after the other (a transaction has one connection and one savepoint stack). */
  savepoints: Promise<unknown>;
}

class KeyTaken extends Error {}
class NotKept extends Error {
  constructor(readonly answer: IdempotentAnswer) {
    super("not kept");
  }
}

export interface IdempotencyLayer {
  /** Use this instead of the pool: inside run(), its statements go to the request's transaction. */
  sql: postgres.Sql;
  /** Runs `work` once for the claim's key; the answer (replayed: from an earlier request with the key). */
  run(
    claim: IdempotencyClaim,
    work: () => Promise<IdempotentAnswer>,
  ): Promise<IdempotentAnswer & { replayed: boolean }>;
}

export function createIdempotencyLayer(deps: {
  sql: postgres.Sql;
  /** Encrypts sealed answers (the webhook secret key, which already protects the secrets at rest). */
  secrets: SecretBox;
  retentionHours?: number;
}): IdempotencyLayer {
  const base = deps.sql;
  const hours = deps.retentionHours ?? DEFAULT_IDEMPOTENCY_RETENTION_HOURS;
  const store = new AsyncLocalStorage<Ambient>();
  const current = () => {
    const ambient = store.getStore();
    return ambient?.open ? ambient : undefined;
  };

  const sql = new Proxy(base, {
    apply(target, _this, args) {
      return Reflect.apply((current()?.tx ?? target) as unknown as typeof target, undefined, args);
    },
    get(target, prop) {
      const ambient = current();
      if (!ambient) return Reflect.get(target, prop);
      if (prop === "begin")
        return (...args: unknown[]) => {
          const fn = args.at(-1) as (tx: postgres.TransactionSql) => Promise<unknown>;
          const run = ambient.savepoints.then(() => ambient.tx.savepoint(fn));
          ambient.savepoints = run.catch(() => {});
          return run;
        };
      return Reflect.get(ambient.tx, prop);
    },
  }) as postgres.Sql;

  type Stored = { fingerprint: Buffer; status: number; body: string; sealed: boolean };
  async function lookup(claim: IdempotencyClaim): Promise<Stored | undefined> {
    const [row] = await base<Stored[]>`
      SELECT fingerprint, status, body, sealed FROM idempotency_keys
      WHERE scope = ${claim.scope} AND idempotency_key = ${claim.key}
        AND created_at > now() - ${hours}::int * interval '1 hour'`;
    return row;
  }

  function replay(claim: IdempotencyClaim, row: Stored): IdempotentAnswer & { replayed: boolean } {
    if (!row.fingerprint.equals(claim.fingerprint)) throw new IdempotencyKeyReusedError();
    const text = row.sealed ? deps.secrets.decrypt(row.body) : row.body;
    return { status: row.status, body: JSON.parse(text), replayed: true };
  }

  async function once(claim: IdempotencyClaim, work: () => Promise<IdempotentAnswer>) {
    return base.begin(async (tx) => {
      // Waits while another request holds the key uncommitted; takes over a row past its retention.
      const [claimed] = await tx`
        INSERT INTO idempotency_keys (scope, idempotency_key, fingerprint, status, body)
        VALUES (${claim.scope}, ${claim.key}, ${claim.fingerprint}, 0, '')
        ON CONFLICT (scope, idempotency_key) DO UPDATE
          SET fingerprint = excluded.fingerprint, status = 0, body = '', sealed = false, created_at = now()
          WHERE idempotency_keys.created_at <= now() - ${hours}::int * interval '1 hour'
        RETURNING 1`;
      if (!claimed) throw new KeyTaken();
      const ambient: Ambient = { tx, open: true, savepoints: Promise.resolve() };
      let answer: IdempotentAnswer;
      try {
        answer = await store.run(ambient, work);
      } finally {
        ambient.open = false;
      }
      const sealed = claim.sealed === true;
      if (answer.status >= 400) throw new NotKept(answer);
      const text = JSON.stringify(answer.body ?? null);
      await tx`
        UPDATE idempotency_keys SET status = ${answer.status}, body = ${sealed ? deps.secrets.encrypt(text) : text}, sealed = ${sealed}
        WHERE scope = ${claim.scope} AND idempotency_key = ${claim.key}`;
      return { ...answer, replayed: false };
    });
  }

  return {
    sql,
    async run(claim, work) {
      const stored = await lookup(claim);
      if (stored) return replay(claim, stored);
      for (let attempt = 1; ; attempt++) {
        try {
          return await once(claim, work);
        } catch (err) {
          if (err instanceof NotKept) return { ...err.answer, replayed: false };
          if (err instanceof KeyTaken) {
            // The request that held the key committed: its answer. (None: it was past retention, or deleted.)
            const row = await lookup(claim);
            if (row) return replay(claim, row);
          } else if (!(isRetryableConflict(err) || (err as { code?: unknown })?.code === ABORTED_TRANSACTION))
            throw err;
          // Still colliding (or the key's row came and went under us): nothing was stored, retry shortly.
          if (attempt >= ATTEMPTS) throw new ContendedWriteError();
          await Bun.sleep(Math.round(Math.random() * 20 * 2 ** attempt));
        }
      }
    },
  };
}

/** Deletes the answers kept longer than `hours` (they are ignored already); how many. */
export async function purgeIdempotencyKeys(sql: postgres.Sql, hours: number): Promise<number> {
  const rows =
    await sql`DELETE FROM idempotency_keys WHERE created_at <= now() - ${hours}::int * interval '1 hour' RETURNING 1`;
  return rows.length;
}

/** What a route handler's context offers the wrapper (Elysia's). */
export interface IdempotentHandlerContext {
  request: Request;
  server?: Pick<Server<unknown>, "requestIP"> | null;
  body: unknown;
  set: { status?: number | string; headers: Record<string, unknown> };
}

/**
 * Runs a POST handler so that it honours Idempotency-Key: without the header as it is; with it, once per key in the
 * scope `scopeOf` names (the API key, or the client's address), the answer replayed to a repeat. Used as
 * `.post(path, (c) => idempotent(layer, scopeOf, c, async ({ … }) => { … }))`, so the handler keeps Elysia's types.
 */
export async function idempotent<C extends IdempotentHandlerContext, R>(
  layer: IdempotencyLayer,
  scopeOf: (ctx: C) => string,
  ctx: C,
  handler: (ctx: C) => R,
  opts: { sealed?: boolean } = {},
): Promise<Awaited<R>> {
  const key = parseIdempotencyKey(ctx.request.headers.get("idempotency-key"));
  if (key === null) return await handler(ctx);
  const url = new URL(ctx.request.url);
  const answer = await layer.run(
    {
      scope: scopeOf(ctx),
      key,
      fingerprint: requestFingerprint(ctx.request.method, url.pathname + url.search, ctx.body),
      sealed: opts.sealed,
    },
    async () => {
      const body = await handler(ctx);
      return { status: typeof ctx.set.status === "number" ? ctx.set.status : 200, body };
    },
  );
  if (answer.replayed) {
    ctx.set.status = answer.status;
    ctx.set.headers[REPLAYED_HEADER] = "true";
  }
  return answer.body as Awaited<R>;
}

/**
 * Every POST route registered on `app` after this call honours Idempotency-Key (idempotent() around its handler,
 * in `scopeOf`'s scope); the handlers are written as usual. `sealedPaths`: routes whose answer holds a secret.
 */
export function idempotentPosts<App extends object>(
  app: App,
  layer: IdempotencyLayer,
  scopeOf: (ctx: IdempotentHandlerContext) => string,
  opts: { sealedPaths?: readonly string[] } = {},
): App {
  const sealed = new Set(opts.sealedPaths ?? []);
  const routes = app as unknown as { post: (path: string, handler: unknown, hook?: unknown) => unknown };
  const register = routes.post.bind(app);
  routes.post = (path, handler, hook) =>
    register(
      path,
      typeof handler === "function"
        ? // The context is handed over whole, so Elysia prepares all of it (body, query, …) for the handler.
          (c: IdempotentHandlerContext) =>
            idempotent(layer, scopeOf, c, handler as (ctx: IdempotentHandlerContext) => unknown, {
              sealed: sealed.has(path),
            })
        : handler,
      hook,
    );
  return app;
}
