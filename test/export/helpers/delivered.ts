/**
 * What a cumulative backend holds of the batches an export delivered: metric name -> attribute
 * key -> value (sums) or "count/sum/buckets" (histograms), and how many points repeated a series
 * already delivered (an export in pages must send each series once).
 */
import type { DataPoint, Histogram, ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { SCOPE_NAME } from "../../../src/export/producer.ts";

export type ByMetric = Map<string, Map<string, string>>;

export function histogramValue(v: { count: number; sum: number; counts: readonly number[] }): string {
  return `${v.count}/${v.sum.toFixed(6)}/${v.counts}`;
}

export const attributesKey = (a: Readonly<Record<string, unknown>>): string =>
  JSON.stringify(Object.entries(a).sort());

export function delivered(batches: readonly ResourceMetrics[]): { byMetric: ByMetric; dups: number } {
  const byMetric: ByMetric = new Map();
  let dups = 0;
  for (const b of batches) {
    for (const sm of b.scopeMetrics) {
      if (sm.scope.name !== SCOPE_NAME) continue;
      for (const m of sm.metrics) {
        let series = byMetric.get(m.descriptor.name);
        if (series === undefined) {
          series = new Map();
          byMetric.set(m.descriptor.name, series);
        }
        for (const p of m.dataPoints as DataPoint<number | Histogram>[]) {
          const key = attributesKey(p.attributes);
          if (series.has(key)) dups++;
          const v = p.value;
          series.set(
            key,
            typeof v === "number"
              ? v.toFixed(6)
              : histogramValue({ count: v.count, sum: v.sum ?? 0, counts: v.buckets.counts }),
          );
        }
      }
    }
  }
  return { byMetric, dups };
}
