/**
 * The GenAI semantic-convention histograms, beside the cline.* counters, from the ledger's
 * genai series (src/ledger/genai/genai.ts): built the same way as the other metrics (ledger totals
 * with the persisted stream start; TTL; delta: the request histograms over the counters' event
 * window, cline.tool.duration over the window of final tool calls with cline.tool.calls,
 * src/ledger/signals/tool-outcomes.ts), so they are exactly once by the same rules. Pure, table-tested.
 *
 *   gen_ai.client.token.usage        {token}  gen_ai.token.type = input (ALL input: uncached +
 *                                             cache read + cache write) | output
 *   gen_ai.client.operation.duration s        request start (latest ts before it) to its ts
 *   cline.tool.duration              s        tool_use message ts to its tool_result message ts,
 *                                             by gen_ai.tool.name and cline.tool.outcome
 */
import { type Attributes, type HrTime, ValueType } from "@opentelemetry/api";
import { AggregationTemporality, DataPointType, type HistogramMetricData } from "@opentelemetry/sdk-metrics";
import type { Temporality } from "../../config/config.ts";
import { GENAI_BOUNDARIES, type GenaiMetric, type GenaiSeriesRow } from "../../ledger/signals/signals.ts";
import { type RepositoryLookup, VCS_SERIES_KEYS } from "../../vcs/repository.ts";
import { ATTR, putClient, seriesKey } from "../attributes.ts";
import { foldPoints } from "../fold.ts";

export const GENAI_METRICS: Readonly<
  Record<GenaiMetric, { readonly name: string; readonly unit: string; readonly description: string }>
> = Object.freeze({
  token_usage: {
    name: "gen_ai.client.token.usage",
    unit: "{token}",
    description:
      "Tokens per model request (input includes cache reads and writes), GenAI semantic conventions",
  },
  operation_duration: {
    name: "gen_ai.client.operation.duration",
    unit: "s",
    description: "Duration of model requests, from the latest message before each to its response",
  },
  tool_duration: {
    name: "cline.tool.duration",
    unit: "s",
    description: "Duration of tool calls, from the calling message to its tool result, by tool and outcome",
  },
});

/** Every attribute key a GenAI data point may carry. */
export const GENAI_ATTRIBUTES: ReadonlySet<string> = new Set([
  ATTR.sessionId,
  ATTR.model,
  ATTR.provider,
  ATTR.toolName,
  "gen_ai.operation.name",
  "gen_ai.token.type",
  "cline.tool.outcome",
  ATTR.client,
  ...VCS_SERIES_KEYS,
]);

export interface GenaiOptions {
  readonly includeSessionId: boolean;
  /** `vcs.*` of the series' session workspace, when repositories go on metric series (as translate.ts). */
  readonly repositoryOf?: RepositoryLookup | undefined;
  /** The copied resource attributes (TranslateOptions.constant). */
  readonly constant?: Readonly<Record<string, string>> | undefined;
}

export interface GenaiPoint {
  readonly metric: GenaiMetric;
  readonly attributes: Readonly<Record<string, string>>;
  readonly count: number;
  readonly sum: number;
  readonly min: number;
  readonly max: number;
  readonly counts: readonly number[];
  readonly updatedMs: number;
  readonly lastEventMs: number;
}

export function genaiAttributes(row: GenaiSeriesRow, opts: GenaiOptions): Record<string, string> {
  const out: Record<string, string> = { ...opts.constant };
  if (opts.includeSessionId) out[ATTR.sessionId] = row.sessionId;
  putClient(out, row.client);
  if (opts.repositoryOf !== undefined) Object.assign(out, opts.repositoryOf(row.project).series);
  if (row.metric === "tool_duration") {
    out["gen_ai.operation.name"] = "execute_tool";
    out[ATTR.toolName] = row.toolName;
    out["cline.tool.outcome"] = row.outcome;
    // The calling message's: dashboards filter every panel by model and provider.
    out[ATTR.provider] = row.provider;
    out[ATTR.model] = row.model;
    return out;
  }
  out["gen_ai.operation.name"] = "chat";
  out[ATTR.provider] = row.provider;
  out[ATTR.model] = row.model;
  if (row.metric === "token_usage") out["gen_ai.token.type"] = row.tokenType;
  return out;
}

/** Rows -> points; rows whose attributes coincide (session.id off) are merged: counts and buckets add. */
export function translateGenai(rows: readonly GenaiSeriesRow[], opts: GenaiOptions): GenaiPoint[] {
  return foldPoints(
    rows,
    (r) => {
      const attributes = genaiAttributes(r, opts);
      return { key: `${r.metric}|${seriesKey(attributes)}`, attributes };
    },
    (r, attributes) => ({
      metric: r.metric,
      attributes,
      count: r.count,
      sum: r.sum,
      min: r.min,
      max: r.max,
      counts: [...r.counts],
      updatedMs: r.updatedMs,
      lastEventMs: r.lastEventMs,
    }),
    (cur, r) => {
      cur.count += r.count;
      cur.sum += r.sum;
      cur.min = Math.min(cur.min, r.min);
      cur.max = Math.max(cur.max, r.max);
      r.counts.forEach((c, i) => {
        cur.counts[i] = (cur.counts[i] ?? 0) + c;
      });
    },
  );
}

/** The series TTL of the other metrics (translate.ts isLive): recent activity, or not yet delivered. */
export function liveGenai(
  points: readonly GenaiPoint[],
  nowMs: number,
  ttlMs: number,
  lastSuccessMs: number,
) {
  return points.filter((p) => p.lastEventMs >= nowMs - ttlMs || p.updatedMs >= lastSuccessMs);
}

export function genaiToMetricData(
  points: readonly GenaiPoint[],
  temporality: Temporality,
  startTime: HrTime,
  endTime: HrTime,
): HistogramMetricData[] {
  const out: HistogramMetricData[] = [];
  for (const metric of ["token_usage", "operation_duration", "tool_duration"] as const) {
    const mine = points.filter((p) => p.metric === metric);
    if (mine.length === 0) continue;
    const d = GENAI_METRICS[metric];
    const boundaries = [...GENAI_BOUNDARIES[metric]];
    out.push({
      descriptor: {
        name: d.name,
        unit: d.unit,
        description: d.description,
        valueType: metric === "token_usage" ? ValueType.INT : ValueType.DOUBLE,
      },
      aggregationTemporality:
        temporality === "delta" ? AggregationTemporality.DELTA : AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.HISTOGRAM,
      dataPoints: mine.map((p) => ({
        startTime,
        endTime,
        attributes: p.attributes as Attributes, // shared, not copied per point (only read to serialize)
        value: {
          buckets: { boundaries, counts: [...p.counts] },
          sum: p.sum,
          count: p.count,
          min: p.min,
          max: p.max,
        },
      })),
    });
  }
  return out;
}
