// Prometheus metrics of one process (docs/operations.md, "Metrics"):
// - a registry per process, made by main.ts and handed to what records into it (prom-client's global default
//   registry is never used, so two services in one test process never share or clash);
// - process and event-loop metrics (prom-client's default metrics; the event-loop delay histogram works on Bun);
// - scrape-time sources: a gauge read from PostgreSQL or Kafka when Prometheus scrapes is loaded at most once per
//   `maxAgeMs` (single flight), bounded by a timeout, and a failing source leaves its gauges out of that scrape
//   (with `metrics_source_up{source}` 0) instead of failing the whole scrape or answering slowly.
import { AggregatorRegistry, collectDefaultMetrics, Gauge, Registry } from "prom-client";

// Services declare their metrics with these (one declared dependency on prom-client, here).
export { Counter, Gauge, Histogram } from "prom-client";

/** One process's metrics as data, to be combined with other processes' (aggregateMetrics). */
export type MetricsSnapshot = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>;

/** What a /metrics endpoint needs. */
export interface MetricsRenderer {
  readonly contentType: string;
  render(): Promise<string>;
}

/**
 * The metrics of several processes of one service as one (the API's workers behind their primary): counters
 * and histograms are summed, and metrics that say otherwise (event-loop lag: average, start time: omitted…) are
 * combined their way. Per-process gauges read from a shared source must live in one process only.
 */
export function aggregateMetrics(load: () => Promise<MetricsSnapshot[]>): MetricsRenderer {
  return {
    contentType: Registry.PROMETHEUS_CONTENT_TYPE,
    render: async () => AggregatorRegistry.aggregate(await load()).metrics(),
  };
}

export interface Metrics extends MetricsRenderer {
  readonly registry: Registry;
  /** Every metric of this process as data (for aggregateMetrics in another process). */
  snapshot(): Promise<MetricsSnapshot>;
  /** A value loaded when Prometheus scrapes, shared by the gauges that read it (see createScrapeSource). */
  source<T>(name: string, load: () => Promise<T>, opts?: ScrapeSourceOptions): ScrapeSource<T>;
}

export interface ScrapeSourceOptions {
  /** A loaded value (or failure) is reused for this long. Default 5 s. */
  maxAgeMs?: number;
  /** A load that has not answered by then counts as failed for this scrape. Default 1.5 s. */
  timeoutMs?: number;
  /** Sees why a load failed (logged, never answered). */
  onError?: (err: unknown) => void;
}

export interface ScrapeSource<T> {
  /** The cached or freshly loaded value; null while the source is failing. Never throws. */
  read(): Promise<T | null>;
  /** Stops reporting this source (its owner stopped). */
  close?(): void;
}

export function createMetrics(opts: { service: string; defaultMetrics?: boolean; now?: () => number }): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service: opts.service });
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
  const sources: ScrapeSource<unknown>[] = [];
  const sourceUp = new Gauge({
    name: "metrics_source_up",
    help: "1 when the last load of a scrape-time source (a database or Kafka query behind some gauges) succeeded, 0 when it failed and those gauges were left out",
    labelNames: ["source"],
    registers: [registry],
    // Gauges are collected concurrently: load every source first, so this scrape reports this scrape's loads.
    async collect() {
      await Promise.all(sources.map((s) => s.read()));
    },
  });
  const now = opts.now ?? Date.now;
  return {
    registry,
    contentType: registry.contentType,
    render: () => registry.metrics(),
    snapshot: () => registry.getMetricsAsJSON(),
    source(name, load, sourceOpts) {
      const source = createScrapeSource(load, {
        ...sourceOpts,
        now,
        onResult: (ok) => sourceUp.set({ source: name }, ok ? 1 : 0),
      });
      sources.push(source);
      return {
        read: () => source.read(),
        close() {
          sources.splice(sources.indexOf(source), 1);
          sourceUp.remove({ source: name });
        },
      };
    },
  };
}

export function createScrapeSource<T>(
  load: () => Promise<T>,
  opts: ScrapeSourceOptions & { now?: () => number; onResult?: (ok: boolean) => void } = {},
): ScrapeSource<T> {
  const maxAgeMs = opts.maxAgeMs ?? 5_000;
  const timeoutMs = opts.timeoutMs ?? 1_500;
  const now = opts.now ?? Date.now;
  let value: T | null = null;
  let loadedAt = -Infinity;
  let inflight: Promise<void> | null = null;

  const refresh = () =>
    (inflight ??= (async () => {
      try {
        value = await load();
        opts.onResult?.(true);
      } catch (err) {
        value = null;
        opts.onResult?.(false);
        opts.onError?.(err);
      } finally {
        loadedAt = now();
        inflight = null;
      }
    })());

  return {
    async read() {
      if (now() - loadedAt < maxAgeMs) return value;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), timeoutMs);
      });
      const outcome = await Promise.race([refresh().then(() => "done" as const), timedOut]);
      clearTimeout(timer);
      if (outcome === "timeout") {
        // The load goes on in the background (single flight); this scrape answers without it.
        opts.onResult?.(false);
        return null;
      }
      return value;
    },
  };
}

export type Labels = Record<string, string | number>;

/**
 * A gauge whose samples are computed from a scrape-time source when Prometheus scrapes: `samples` turns the
 * loaded value into label sets and values. While the source fails the gauge has no samples.
 */
export function gaugeFromSource<T>(
  metrics: Metrics,
  opts: {
    name: string;
    help: string;
    labelNames?: string[];
    source: ScrapeSource<T>;
    samples: (value: T) => { labels?: Labels; value: number }[];
  },
): Gauge {
  let missing = false;
  const gauge = new Gauge({
    name: opts.name,
    help: opts.help,
    labelNames: opts.labelNames ?? [],
    registers: [metrics.registry],
    async collect() {
      const value = await opts.source.read();
      this.reset();
      missing = value === null;
      if (value === null) return;
      for (const s of opts.samples(value)) {
        if (s.labels) this.set(s.labels, s.value);
        else this.set(s.value);
      }
    },
  });
  // A gauge without labels always has a sample (0 after reset): drop it while the source fails, so a failing
  // database never reads as "0 rows waiting".
  const get = gauge.get.bind(gauge);
  gauge.get = async () => {
    const result = await get();
    return missing ? { ...result, values: [] } : result;
  };
  return gauge;
}

/** Histogram buckets in seconds for request and handler latencies: 5 ms to 30 s. */
export const LATENCY_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
