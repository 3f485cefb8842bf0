/**
 * What the producer and its pages share (src/export/producer.ts, pages.ts): SDK metric data of
 * translated points and their times. Its own module so neither of the two imports the other back.
 */
import type { HrTime } from "@opentelemetry/api";
import { AggregationTemporality, DataPointType, type MetricData } from "@opentelemetry/sdk-metrics";
import type { Temporality } from "../config/config.ts";
import { METRIC_IDS, METRICS, type MetricId, type SeriesPoint } from "./translate.ts";

export function nsToHrTime(ns: bigint): HrTime {
  return [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
}

/** A point's end time: `endNs`, but always after the start (a window is never empty). */
export function effectiveEndNs(startNs: bigint, endNs: bigint): bigint {
  return endNs > startNs ? endNs : startNs + 1n;
}

/** SDK metric data for translated points: monotonic SUMs, one start and end time for all. */
export function toMetricData(
  points: ReadonlyMap<MetricId, readonly SeriesPoint[]>,
  temporality: Temporality,
  startNs: bigint,
  endNs: bigint,
): MetricData[] {
  const startTime = nsToHrTime(startNs);
  const endTime = nsToHrTime(effectiveEndNs(startNs, endNs));
  const out: MetricData[] = [];
  for (const id of METRIC_IDS) {
    const series = points.get(id);
    if (series === undefined || series.length === 0) continue;
    const d = METRICS[id];
    out.push({
      descriptor: { name: d.name, description: d.description, unit: d.unit, valueType: d.valueType },
      aggregationTemporality:
        temporality === "delta" ? AggregationTemporality.DELTA : AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.SUM,
      isMonotonic: true,
      // The point shares its series' attributes (built here, only read by the SDK's exporters
      // to serialize them): no copy per point of a 100,000-series export.
      dataPoints: series.map((p) => ({ startTime, endTime, attributes: p.attributes, value: p.value })),
    });
  }
  return out;
}
