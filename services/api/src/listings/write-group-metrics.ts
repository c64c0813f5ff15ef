// Group commit on /metrics (docs/operations.md, "Metrics"): how many single listing PUTs each group write took.
import { Histogram, type Metrics } from "@pss/service-kit";
import type { WriteGroupStats } from "./listing-write-groups.ts";

export function createWriteGroupMetrics(metrics: Metrics): WriteGroupStats {
  const size = new Histogram({
    name: "api_write_group_size",
    help: "Single listing PUTs written together per group write (1: written alone); _count is group writes, _sum PUTs",
    buckets: [1, 2, 4, 8, 16, 32, 64, 100],
    registers: [metrics.registry],
  });
  return { onGroup: (n) => size.observe(n) };
}
