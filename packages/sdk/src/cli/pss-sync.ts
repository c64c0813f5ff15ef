// pss-sync: pushes a feed file (NDJSON or CSV) of brokers and listings to the partner API.
// Exit codes: 0 every record synced; 1 a record failed (or --archive-missing could not be confirmed, or the run
// was interrupted); 2 the run could not start (bad flags, unreadable feed, API unreachable, key refused).
import { parseArgs } from "node:util";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline/promises";
import { PssApiError, PssError } from "../client/errors.ts";
import { createPartnerClient, MAX_BATCH_ITEMS, SDK_VERSION } from "../client/partner-client.ts";
import { createRecordValidator } from "../validation/record-validator.ts";
import { CheckpointMismatchError, openCheckpoint } from "../sync/checkpoint.ts";
import { formatOf, readFeed } from "../sync/feed.ts";
import { createPacer } from "../sync/pacer.ts";
import { fileReport, nullReport, type ReportLine } from "../sync/report.ts";
import { DEFAULT_BATCH_SIZE, runSync } from "../sync/run-sync.ts";
import { createProgress, type ProgressMode } from "./progress.ts";
import { runReportCommand } from "./report-command.ts";

export const USAGE = `Usage: pss-sync <feed file> [flags]
       pss-sync report [--warnings] [--json] [--api-url <url>] [--concurrency <n>] [--rpm <n>]

Pushes brokers and listings from a feed file to the Partner Syndication Service.
Feed: NDJSON, one record a line: {"kind":"broker"|"listing","id":"<external ID>","body":{<PUT body>}}
      or CSV (*.csv) with columns kind,id and the body's fields as dotted names (location.city);
      arrays and objects as JSON in one cell.

Flags:
  --api-url <url>         API root (or PSS_API_URL), e.g. https://api.example.com
  --api-key <key>         API key (or PSS_API_KEY; prefer the variable: command lines are visible to others)
  --format ndjson|csv     feed format (default: by extension, .csv is CSV)
  --dry-run               validate and compare with the API's dry-run; nothing is stored
  --resume                skip records whose content the API already acknowledged (checkpoint), and
                          continue a run that was interrupted
  --checkpoint <file>     checkpoint file (default: <feed file>.checkpoint)
  --bind-checkpoint       bind a checkpoint of an earlier pss-sync (which did not record the partner) to
                          this key's partner; without it such a checkpoint is refused
  --archive-missing       set ARCHIVED on listings synced earlier (checkpoint) that are not in this feed
  --yes                   do not ask before archiving
  --report <file>         one NDJSON line per record: {kind,id,outcome,httpStatus,serviceId,url,error}; - for stdout
  --batch-size <n>        records per request, 1-500 (default 100: batches; 1 = one PUT per record)
  --concurrency <n>       requests in flight at once (default 8)
  --rpm <n>               records-per-minute budget, counted as the API counts its rate limit: one per
                          record, a batch counts its items (default 1000; 0 = no limit)
  --max-attempts <n>      attempts per request on network errors, 408, 429 and 5xx (default 10)
  --progress <mode>       bar, ndjson or none (default: bar on a terminal, ndjson otherwise)
  -h, --help, --version

pss-sync report lists the partner's listings that are not live (processing report state PROCESSING,
NOT_VISIBLE or FAILED), with why; --warnings also lists those live with warnings; --json prints one JSON line
per listing. (A feed file named "report" is given as ./report.)
`;

export interface CliIo {
  argv: string[];
  env: Record<string, string | undefined>;
  stderr: { write(text: string): unknown; isTTY?: boolean; columns?: number };
  stdinIsTTY: boolean;
  /** Where `pss-sync report` prints (default: process.stdout). */
  stdout?: { write(text: string): unknown };
  /** Asks a yes/no question on the terminal. */
  ask?(question: string): Promise<string>;
  fetch?: (request: Request) => Promise<Response>;
  signal?: AbortSignal;
}

class UsageError extends Error {}

function positiveInt(name: string, raw: string | undefined, fallback: number, min = 1): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min)
    throw new UsageError(`--${name} must be an integer of at least ${min}, not ${JSON.stringify(raw)}`);
  return Number(raw);
}

function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      "api-url": { type: "string" },
      "api-key": { type: "string" },
      format: { type: "string" },
      "dry-run": { type: "boolean" },
      resume: { type: "boolean" },
      checkpoint: { type: "string" },
      "bind-checkpoint": { type: "boolean" },
      "archive-missing": { type: "boolean" },
      yes: { type: "boolean" },
      report: { type: "string" },
      concurrency: { type: "string" },
      "batch-size": { type: "string" },
      rpm: { type: "string" },
      "max-attempts": { type: "string" },
      progress: { type: "string" },
      warnings: { type: "boolean" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean" },
    },
  });
  return { values, positionals };
}

export async function main(io: CliIo): Promise<number> {
  const say = (text: string) => io.stderr.write(`pss-sync: ${text}\n`);
  let args: ReturnType<typeof parse>;
  try {
    args = parse(io.argv);
  } catch (err) {
    say(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values: v, positionals } = args;
  if (v.help) return (io.stderr.write(USAGE), 0);
  if (v.version) return (io.stderr.write(`${SDK_VERSION}\n`), 0);

  try {
    if (positionals.length !== 1)
      throw new UsageError(`give exactly one feed file${positionals.length ? ` (got ${positionals.length})` : ""}`);
    const reportCommand = positionals[0] === "report";
    const feedPath = positionals[0]!;
    if (!reportCommand && (v.warnings || v.json))
      throw new UsageError("--warnings and --json belong to pss-sync report");
    if (reportCommand) {
      const misplaced = (
        ["format", "dry-run", "resume", "checkpoint", "archive-missing", "yes", "report"] as const
      ).filter((f) => v[f] !== undefined);
      if (misplaced.length) throw new UsageError(`pss-sync report takes no --${misplaced[0]}`);
    }
    const apiUrl = v["api-url"] ?? io.env.PSS_API_URL;
    const apiKey = v["api-key"] ?? io.env.PSS_API_KEY;
    if (!apiUrl) throw new UsageError("the API URL is missing: pass --api-url or set PSS_API_URL");
    if (!apiKey) throw new UsageError("the API key is missing: set PSS_API_KEY (or pass --api-key)");
    if (!/^https?:\/\/[^/]/i.test(apiUrl))
      throw new UsageError(`--api-url must be an http(s) URL, not ${JSON.stringify(apiUrl)}`);
    const format = formatOf(feedPath, v.format);
    const concurrency = positiveInt("concurrency", v.concurrency, 8);
    const batchSize = positiveInt("batch-size", v["batch-size"], DEFAULT_BATCH_SIZE);
    if (batchSize > MAX_BATCH_ITEMS)
      throw new UsageError(`--batch-size must be at most ${MAX_BATCH_ITEMS}, not ${batchSize}`);
    const rpm = positiveInt("rpm", v.rpm, 1000, 0);
    const maxAttempts = positiveInt("max-attempts", v["max-attempts"], 10);
    const progressMode = (v.progress ?? (io.stderr.isTTY ? "bar" : "ndjson")) as ProgressMode;
    if (!["bar", "ndjson", "none"].includes(progressMode))
      throw new UsageError(`--progress must be bar, ndjson or none, not ${JSON.stringify(v.progress)}`);
    if (v.yes && !v["archive-missing"]) throw new UsageError("--yes only confirms --archive-missing");
    if (!reportCommand && !existsSync(feedPath)) throw new UsageError(`${feedPath}: no such file`);

    const pacer = createPacer({ requestsPerMinute: rpm });
    let requests = 0;
    const transport = io.fetch ?? ((request: Request) => fetch(request));
    const client = createPartnerClient({
      baseUrl: apiUrl,
      apiKey,
      fetch: async (request) => {
        await pacer.acquire(io.signal, await rateUnits(request));
        requests += 1;
        return transport(request);
      },
      retry: {
        maxAttempts,
        // The API asked everyone to wait (429, 503 with Retry-After): every worker waits, not just this one.
        onRetry: (info) => info.retryAfterMs !== null && pacer.pauseFor(info.retryAfterMs),
      },
    });

    // Before anything is read or sent: the URL answers and the key is accepted; its answer names the partner.
    let partner: string;
    try {
      partner = partnerIdentity(await client.health({ signal: io.signal }), apiKey);
    } catch (err) {
      if (err instanceof PssApiError && err.status === 401)
        throw new UsageError(`the API at ${apiUrl} refused the key (401 Unauthorized)`);
      throw new UsageError(`cannot reach the API at ${apiUrl}: ${(err as Error).message}`);
    }
    if (reportCommand) {
      await runReportCommand({
        client,
        concurrency,
        includeWarnings: v.warnings ?? false,
        json: v.json ?? false,
        out: { write: (t: string) => (io.stdout ?? process.stdout).write(t) },
        signal: io.signal,
      });
      return 0;
    }
    if (v["dry-run"]) await requireDryRun(apiUrl, transport);

    const feed = readFeed(feedPath, format);
    const checkpoint = openCheckpoint(
      v.checkpoint ?? `${feedPath}.checkpoint`,
      { apiUrl, apiKey, partner },
      { bindUnowned: v["bind-checkpoint"] ?? false },
    );
    // An API from before batches: one PUT per record, as --batch-size 1. Asked once the checkpoint is known to be
    // this partner's (a refused checkpoint sends nothing more than the health check).
    const batches = batchSize > 1 && (await offersBatches(apiUrl, transport));
    const report = v.report ? fileReport(v.report) : nullReport;
    const failures: ReportLine[] = [];
    const progress = createProgress(progressMode, io.stderr);
    let declinedNonInteractively = false;
    try {
      const summary = await runSync(feed, {
        client,
        validator: createRecordValidator(),
        checkpoint,
        report: {
          write(line) {
            if (line.outcome === "failed") failures.push(line);
            report.write(line);
          },
          close() {},
        },
        dryRun: v["dry-run"],
        resume: v.resume,
        concurrency,
        batchSize: batches ? batchSize : 1,
        archiveMissing: v["archive-missing"]
          ? {
              async confirm(ids) {
                if (v.yes) return true;
                if (!io.stdinIsTTY || !io.ask) {
                  declinedNonInteractively = true;
                  progress.message(
                    `pss-sync: --archive-missing would archive ${ids.length} listing(s); there is no terminal to confirm on, so pass --yes`,
                  );
                  return false;
                }
                const sample = ids.slice(0, 5).join(", ") + (ids.length > 5 ? ", …" : "");
                progress.interrupt();
                const answer = await io.ask(
                  `Archive ${ids.length} listing(s) that are not in the feed (${sample})? Type "yes" to confirm: `,
                );
                return answer.trim().toLowerCase() === "yes";
              },
            }
          : undefined,
        onProgress: (e) => progress.update(e),
        requestCount: () => requests,
        signal: io.signal,
      });
      progress.summary(summary, failures);
      return summary.failed > 0 || summary.interrupted || declinedNonInteractively ? 1 : 0;
    } finally {
      checkpoint.compact();
      checkpoint.close();
      report.close();
    }
  } catch (err) {
    if (err instanceof UsageError || err instanceof CheckpointMismatchError || err instanceof PssError) {
      say(err.message);
      return 2;
    }
    if ((err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "EACCES") {
      say((err as Error).message);
      return 2;
    }
    throw err;
  }
}

/** Whether the API's own document offers the batch upserts (an older API answers them 404). */
async function offersBatches(apiUrl: string, transport: (request: Request) => Promise<Response>): Promise<boolean> {
  const res = await transport(new Request(`${apiUrl.replace(/\/+$/, "")}/partner/v1/openapi.json`)).catch(() => null);
  const served = res?.ok
    ? ((await res.json().catch(() => null)) as { paths?: Record<string, { post?: unknown }> } | null)
    : null;
  return Boolean(
    served?.paths?.["/partner/v1/listings/batch"]?.post && served.paths["/partner/v1/brokers/batch"]?.post,
  );
}

/** What a request costs of the key's rate limit: the API counts every item of a batch. */
async function rateUnits(request: Request): Promise<number> {
  if (request.method !== "POST" || !/\/batch(\?|$)/.test(request.url)) return 1;
  const body = (await request
    .clone()
    .json()
    .catch(() => null)) as { items?: unknown[] } | null;
  return Math.max(1, body?.items?.length ?? 1);
}

/**
 * Whose records a checkpoint holds: the partner the API names (every key of a partner, live, test or rotated,
 * shares it), or for an API whose health answer does not name it, the key itself (a fingerprint, never the key).
 */
export function partnerIdentity(health: { partnerId?: unknown }, apiKey: string): string {
  if (typeof health.partnerId === "string" && health.partnerId) return `partner:${health.partnerId}`;
  return `key:${createHash("sha256").update(apiKey).digest("hex").slice(0, 16)}`;
}

/** A dry-run against an API without it would store every record: read the API's own document first. */
async function requireDryRun(apiUrl: string, transport: (request: Request) => Promise<Response>): Promise<void> {
  const res = await transport(new Request(`${apiUrl.replace(/\/+$/, "")}/partner/v1/openapi.json`));
  const served = (await res.json().catch(() => null)) as {
    paths?: Record<string, { put?: { parameters?: { name: string; in: string }[] } }>;
  } | null;
  const supports = (path: string) =>
    served?.paths?.[path]?.put?.parameters?.some((p) => p.name === "dryRun" && p.in === "query") ?? false;
  if (
    !res.ok ||
    !supports("/partner/v1/brokers/{externalBrokerId}") ||
    !supports("/partner/v1/listings/{externalListingId}")
  ) {
    throw new UsageError(
      `the API at ${apiUrl} does not offer dry-run (its OpenAPI document has no dryRun parameter on the PUTs); nothing was sent`,
    );
  }
}

/** Runs the CLI in this process: signals stop it cleanly (in-flight requests abandoned, checkpoint kept). */
export async function runCli(): Promise<void> {
  const controller = new AbortController();
  let stops = 0;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      stops += 1;
      if (stops > 1) process.exit(130);
      process.stderr.write(
        `\npss-sync: ${signal}: stopping; the checkpoint keeps what was synced (Ctrl-C again to quit at once)\n`,
      );
      controller.abort(new Error(`stopped by ${signal}`));
    });
  }
  const code = await main({
    argv: process.argv.slice(2),
    env: process.env,
    stderr: process.stderr,
    stdinIsTTY: Boolean(process.stdin.isTTY),
    ask: async (question) => {
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        return await rl.question(question);
      } finally {
        rl.close();
      }
    },
    signal: controller.signal,
  });
  process.exit(controller.signal.aborted ? 130 : code);
}
