/** The "window" side of the GenAI histograms: a delta window's histograms, built in memory. */

import { bucketIndex } from "../schema.ts";
import { GENAI_BOUNDARIES, type GenaiDims, type GenaiMetric, type GenaiSeriesRow } from "./layout.ts";

/**
 * Histograms of a delta window, built from its rows in memory (a window is bounded by the
 * exporter's batch size): one per metric and dims, the same bucketing as the running totals.
 */
export class WindowHistograms {
  private readonly out = new Map<
    string,
    { -readonly [K in keyof GenaiSeriesRow]: GenaiSeriesRow[K] } & { counts: number[] }
  >();

  add(metric: GenaiMetric, dims: GenaiDims, value: number, r: { tsMs: number; ingestedMs: number }): void {
    const k = `${metric}\u0000${dims.sessionId}\u0000${dims.client}\u0000${dims.project}\u0000${dims.model}\u0000${dims.provider}\u0000${dims.tokenType}\u0000${dims.toolName}\u0000${dims.outcome}`;
    let s = this.out.get(k);
    if (s === undefined) {
      s = {
        metric,
        ...dims,
        count: 0,
        sum: 0,
        min: value,
        max: value,
        firstMs: r.ingestedMs,
        updatedMs: r.ingestedMs,
        lastEventMs: r.tsMs,
        counts: new Array<number>(GENAI_BOUNDARIES[metric].length + 1).fill(0),
      };
      this.out.set(k, s);
    }
    s.count++;
    s.sum += value;
    s.min = Math.min(s.min, value);
    s.max = Math.max(s.max, value);
    s.updatedMs = Math.max(s.updatedMs, r.ingestedMs);
    s.lastEventMs = Math.max(s.lastEventMs, r.tsMs);
    const i = bucketIndex(value, GENAI_BOUNDARIES[metric]);
    s.counts[i] = (s.counts[i] ?? 0) + 1;
  }

  rows(): GenaiSeriesRow[] {
    return [...this.out.values()];
  }
}
