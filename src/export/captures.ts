/**
 * Capture series rows (ledger `capture_series`, or `captureDelta` of one window) -> OpenTelemetry
 * MetricData. Pure: no SDK reader, no clock, no I/O. The metric contract is docs/captures.md.
 *
 * Payload size and estimated tokens are HISTOGRAMS: a prompt-growth investigation asks for the
 * distribution of request sizes per stage (p50 / p95, heatmaps), and a histogram's `sum` and
 * `count` still give the exact totals and the exact number of records. Their buckets are
 * maintained in the ledger with the series, so restarts and re-exports repeat the same stream.
 * Everything else is a monotonic Sum.
 */

import type { Attributes, HrTime } from "@opentelemetry/api";
import { ValueType } from "@opentelemetry/api";
import {
  AggregationTemporality,
  DataPointType,
  type HistogramMetricData,
  type MetricData,
  type SumMetricData,
} from "@opentelemetry/sdk-metrics";
import type { ProjectMode, Temporality } from "../config/config.ts";
import type { CaptureSeriesRow } from "../ledger/ledger.ts";
import { CAPTURE_PAYLOAD_BOUNDARIES, CAPTURE_TOKEN_BOUNDARIES } from "../ledger/schema.ts";
import type { RepositoryLookup } from "../vcs/repository.ts";
import { type Attrs, SERIES_DIMS_KEYS, seriesDimsAttributes } from "./attributes.ts";
import { foldPoints, keyedByAttributes } from "./fold.ts";
import { isLive } from "./translate.ts";

/** Attribute keys the capture metrics add to the common ones. */
export const CAPTURE_ATTR = {
  stage: "cline.capture.stage",
  role: "cline.message.role",
} as const;

/** Every attribute key a capture data point can carry: nothing else is ever set. */
export const CAPTURE_ALLOWED_ATTRIBUTES: ReadonlySet<string> = new Set([
  ...SERIES_DIMS_KEYS,
  CAPTURE_ATTR.stage,
  CAPTURE_ATTR.role,
]);

export const MESSAGE_ROLES = ["system", "user", "assistant", "tool", "other"] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

export const CAPTURE_METRICS = {
  payloadSize: {
    name: "cline.request.payload.size",
    unit: "By",
    description: "Size of each captured provider request (summary.payloadBytes), per capture stage",
    valueType: ValueType.INT,
  },
  estimatedTokens: {
    name: "cline.request.estimated_tokens",
    unit: "{token}",
    description:
      "Cline's request-side token estimate of each captured provider request (ceil(bytes/3)), per capture stage; not provider usage",
    valueType: ValueType.INT,
  },
  captures: {
    name: "cline.request.captures",
    unit: "{request}",
    description: "Provider-request capture records read (one per request and stage)",
    valueType: ValueType.INT,
  },
  retries: {
    name: "cline.request.retries",
    unit: "{request}",
    description: "Capture records of a stage captured again for the same request (attempt > 1)",
    valueType: ValueType.INT,
  },
  messages: {
    name: "cline.request.messages",
    unit: "{message}",
    description: "Messages sent in captured requests, by role (each request counts every message it carries)",
    valueType: ValueType.INT,
  },
  toolResults: {
    name: "cline.request.tool_results",
    unit: "{block}",
    description: "Tool-result blocks sent in captured requests",
    valueType: ValueType.INT,
  },
  reasoningBlocks: {
    name: "cline.request.reasoning_blocks",
    unit: "{block}",
    description: "Reasoning blocks sent in captured requests",
    valueType: ValueType.INT,
  },
} as const;

export type CaptureMetricId = keyof typeof CAPTURE_METRICS;

export interface CaptureTranslateOptions {
  readonly project: ProjectMode;
  readonly includeSessionId: boolean;
  readonly repositoryOf?: RepositoryLookup | undefined;
  readonly constant?: Attrs | undefined;
}

export interface CaptureMetricOptions extends CaptureTranslateOptions {
  readonly temporality: Temporality;
  readonly startTime: HrTime;
  readonly endTime: HrTime;
}

/** The attributes of a capture series: common ones (agent only when known) and the stage. */
export function captureAttributes(
  row: Pick<CaptureSeriesRow, "sessionId" | "agent" | "project" | "model" | "provider" | "client" | "stage">,
  opts: CaptureTranslateOptions,
): Attrs {
  const out = seriesDimsAttributes(row, opts);
  out[CAPTURE_ATTR.stage] = row.stage;
  return out;
}

/** One capture series after attributes were rendered; rows that coincide are merged. */
export interface CaptureSeriesPoint {
  readonly attributes: Attrs;
  readonly captures: number;
  readonly retries: number;
  readonly payload: HistogramTotals;
  readonly tokens: HistogramTotals;
  readonly roles: Readonly<Record<MessageRole, number>>;
  readonly toolResults: number;
  readonly reasoningBlocks: number;
  readonly updatedMs: number;
  readonly lastEventMs: number;
}

export interface HistogramTotals {
  readonly sum: number;
  readonly count: number;
  readonly min: number;
  readonly max: number;
  readonly counts: readonly number[];
}

interface MutablePoint {
  attributes: Attrs;
  captures: number;
  retries: number;
  payload: { sum: number; count: number; min: number; max: number; counts: number[] };
  tokens: { sum: number; count: number; min: number; max: number; counts: number[] };
  roles: Record<MessageRole, number>;
  toolResults: number;
  reasoningBlocks: number;
  updatedMs: number;
  lastEventMs: number;
}

function addCounts(into: number[], from: readonly number[]): void {
  for (let i = 0; i < into.length; i++) into[i] = (into[i] as number) + (from[i] ?? 0);
}

/**
 * Rows -> one point per distinct attribute set. Rows that coincide once an attribute is dropped
 * (`session.id` off, project `none`) are summed, buckets added, min/max combined.
 */
export function translateCaptures(
  rows: readonly CaptureSeriesRow[],
  opts: CaptureTranslateOptions,
): CaptureSeriesPoint[] {
  return foldPoints(
    rows,
    (row) => (row.captures === 0 ? undefined : keyedByAttributes(captureAttributes(row, opts))),
    (row, attributes): MutablePoint => ({
      attributes,
      captures: row.captures,
      retries: row.retries,
      payload: {
        sum: row.payloadBytes,
        count: row.captures,
        min: row.payloadMin,
        max: row.payloadMax,
        counts: [...row.payloadBuckets],
      },
      tokens: {
        sum: row.estimatedTokens,
        count: row.captures,
        min: row.tokensMin,
        max: row.tokensMax,
        counts: [...row.tokenBuckets],
      },
      roles: rolesOf(row),
      toolResults: row.toolResults,
      reasoningBlocks: row.reasoningBlocks,
      updatedMs: row.updatedMs,
      lastEventMs: row.lastEventMs,
    }),
    (prev, row) => {
      prev.captures += row.captures;
      prev.retries += row.retries;
      for (const [h, sum, min, max, counts] of [
        [prev.payload, row.payloadBytes, row.payloadMin, row.payloadMax, row.payloadBuckets],
        [prev.tokens, row.estimatedTokens, row.tokensMin, row.tokensMax, row.tokenBuckets],
      ] as const) {
        h.sum += sum;
        h.count += row.captures;
        h.min = Math.min(h.min, min);
        h.max = Math.max(h.max, max);
        addCounts(h.counts, counts);
      }
      const roles = rolesOf(row);
      for (const r of MESSAGE_ROLES) prev.roles[r] += roles[r];
      prev.toolResults += row.toolResults;
      prev.reasoningBlocks += row.reasoningBlocks;
    },
  );
}

function rolesOf(row: CaptureSeriesRow): Record<MessageRole, number> {
  return {
    system: row.roleSystem,
    user: row.roleUser,
    assistant: row.roleAssistant,
    tool: row.roleTool,
    other: row.roleOther,
  };
}

/**
 * Cumulative points worth reporting: the newest capture is within `ttlMs` of now, or the current
 * value was not delivered yet (the same rule as the usage metrics: `isLive`).
 */
export function liveCapturePoints(
  points: readonly CaptureSeriesPoint[],
  nowMs: number,
  ttlMs: number,
  deliveredBeforeMs: number,
): CaptureSeriesPoint[] {
  return points.filter((p) => isLive(p, nowMs, ttlMs, deliveredBeforeMs));
}

function descriptor(id: CaptureMetricId) {
  const d = CAPTURE_METRICS[id];
  return { name: d.name, description: d.description, unit: d.unit, valueType: d.valueType };
}

/** Translated points -> MetricData (histograms and monotonic sums), all with one start and end time. */
export function capturePointsToMetricData(
  points: readonly CaptureSeriesPoint[],
  opts: Pick<CaptureMetricOptions, "temporality" | "startTime" | "endTime">,
): MetricData[] {
  if (points.length === 0) return [];
  const aggregationTemporality =
    opts.temporality === "delta" ? AggregationTemporality.DELTA : AggregationTemporality.CUMULATIVE;
  const { startTime, endTime } = opts;
  const histogram = (
    id: "payloadSize" | "estimatedTokens",
    boundaries: readonly number[],
    pick: (p: CaptureSeriesPoint) => HistogramTotals,
  ): HistogramMetricData => ({
    descriptor: descriptor(id),
    aggregationTemporality,
    dataPointType: DataPointType.HISTOGRAM,
    dataPoints: points.map((p) => {
      const h = pick(p);
      return {
        startTime,
        endTime,
        attributes: { ...p.attributes } as Attributes,
        value: {
          buckets: { boundaries: [...boundaries], counts: [...h.counts] },
          sum: h.sum,
          count: h.count,
          min: h.min,
          max: h.max,
        },
      };
    }),
  });
  const sum = (
    id: Exclude<CaptureMetricId, "payloadSize" | "estimatedTokens">,
    values: (p: CaptureSeriesPoint) => readonly (readonly [Attrs, number])[],
  ): SumMetricData | undefined => {
    const dataPoints = points.flatMap((p) =>
      values(p).map(([attributes, value]) => ({
        startTime,
        endTime,
        attributes: { ...attributes } as Attributes,
        value,
      })),
    );
    if (dataPoints.length === 0) return undefined;
    return {
      descriptor: descriptor(id),
      aggregationTemporality,
      dataPointType: DataPointType.SUM,
      isMonotonic: true,
      dataPoints,
    };
  };
  const out: (MetricData | undefined)[] = [
    histogram("payloadSize", CAPTURE_PAYLOAD_BOUNDARIES, (p) => p.payload),
    histogram("estimatedTokens", CAPTURE_TOKEN_BOUNDARIES, (p) => p.tokens),
    sum("captures", (p) => [[p.attributes, p.captures]]),
    sum("retries", (p) => [[p.attributes, p.retries]]),
    // A role a series never sent has no series (rather than a 0 one per role and stage).
    sum("messages", (p) =>
      MESSAGE_ROLES.filter((r) => p.roles[r] > 0).map(
        (r) => [{ ...p.attributes, [CAPTURE_ATTR.role]: r }, p.roles[r]] as const,
      ),
    ),
    sum("toolResults", (p) => [[p.attributes, p.toolResults]]),
    sum("reasoningBlocks", (p) => [[p.attributes, p.reasoningBlocks]]),
  ];
  return out.filter((m): m is MetricData => m !== undefined);
}

/**
 * The whole translation: ledger capture series rows (cumulative totals, or one delta window)
 * -> MetricData for a MetricProducer's ScopeMetrics.
 */
export function captureSeriesToMetricData(
  rows: readonly CaptureSeriesRow[],
  opts: CaptureMetricOptions,
): MetricData[] {
  return capturePointsToMetricData(translateCaptures(rows, opts), opts);
}
