/**
 * Activity series rows (ledger `activity_series`, or one delta window of `activity`) ->
 * OpenTelemetry MetricData (docs/metrics.md "Active time, commits, pull requests, sessions"):
 * - `cline.active_time` (s, double; `type` = user | agent, Claude Code's
 *   `claude_code.active_time.total` with `type` = user | cli);
 * - `cline.commits` and `cline.pull_requests` (Claude Code's `claude_code.commit.count`,
 *   `claude_code.pull_request.count`);
 * - `cline.sessions` (`start_type` = new | resumed; Claude Code's `claude_code.session.count`).
 * Monotonic sums with the usual series attributes. Pure: no SDK reader, no clock, no I/O.
 */
import type { Attributes, HrTime } from "@opentelemetry/api";
import { ValueType } from "@opentelemetry/api";
import { AggregationTemporality, DataPointType, type MetricData } from "@opentelemetry/sdk-metrics";
import type { Temporality } from "../config/config.ts";
import type { ActivitySeriesRow } from "../ledger/ledger.ts";
import { ATTR, type Attrs, SERIES_DIMS_KEYS, seriesDimsAttributes } from "./attributes.ts";
import type { CompactionTranslateOptions } from "./compactions.ts";
import { foldPoints, keyedByAttributes } from "./fold.ts";
import { isLive } from "./translate.ts";

/** Attribute keys the activity metrics add to the common ones. */
export const ACTIVITY_ATTR = {
  type: ATTR.type,
  startType: ATTR.startType,
} as const;

/** Every attribute key an activity data point can carry (besides the copied resource attributes). */
export const ACTIVITY_ALLOWED_ATTRIBUTES: ReadonlySet<string> = new Set([
  ...SERIES_DIMS_KEYS,
  ACTIVITY_ATTR.type,
  ACTIVITY_ATTR.startType,
]);

export const ACTIVITY_METRICS = {
  active_time: {
    name: "cline.active_time",
    unit: "s",
    description:
      "Active time from the session's timestamps: the agent's (requests, tool runs) and the user's (answering, reviewing, typing the next prompt), idle gaps left out",
    valueType: ValueType.DOUBLE,
  },
  commit: {
    name: "cline.commits",
    unit: "{commit}",
    description: "Commits made by commands the agent ran that succeeded (git commit)",
    valueType: ValueType.INT,
  },
  pull_request: {
    name: "cline.pull_requests",
    unit: "{pull_request}",
    description:
      "Pull and merge requests opened by commands the agent ran that succeeded (gh pr create, glab mr create, ...)",
    valueType: ValueType.INT,
  },
  session: {
    name: "cline.sessions",
    unit: "{session}",
    description:
      "Sessions started (start_type=new) and resumed (start_type=resumed), where the files say which",
    valueType: ValueType.INT,
  },
} as const;

type Kind = keyof typeof ACTIVITY_METRICS;

export interface ActivityPoint {
  readonly kind: Kind;
  readonly attributes: Attrs;
  value: number;
  updatedMs: number;
  lastEventMs: number;
}

/** The attributes of one activity series: the usual ones, and its `type` or `start_type`. */
export function activityAttributes(row: ActivitySeriesRow, opts: CompactionTranslateOptions): Attrs {
  const out = seriesDimsAttributes(row, opts);
  if (row.kind === "active_time") out[ACTIVITY_ATTR.type] = row.detail;
  if (row.kind === "session") out[ACTIVITY_ATTR.startType] = row.detail;
  return out;
}

/** The value a row adds: seconds of active time, else its records. */
function amountOf(row: ActivitySeriesRow): number {
  return row.kind === "active_time" ? row.amount / 1000 : row.records;
}

/** Rows -> one point per metric and attribute set; rows that coincide (session.id off, project none) are summed. */
export function translateActivity(
  rows: Iterable<ActivitySeriesRow>,
  opts: CompactionTranslateOptions,
): ActivityPoint[] {
  return foldPoints(
    [...rows],
    (row) => {
      if (row.amount === 0 || !(row.kind in ACTIVITY_METRICS)) return undefined;
      const k = keyedByAttributes(activityAttributes(row, opts));
      return { key: `${row.kind}\u0000${k.key}`, attributes: k.attributes };
    },
    (row, attributes) => ({
      kind: row.kind as Kind,
      attributes,
      value: amountOf(row),
      updatedMs: row.updatedMs,
      lastEventMs: row.lastEventMs,
    }),
    (p, row) => {
      p.value += amountOf(row);
    },
  );
}

/** Cumulative points worth reporting: the same liveness rule as every other series (`isLive`). */
export function liveActivityPoints(
  points: readonly ActivityPoint[],
  nowMs: number,
  ttlMs: number,
  deliveredBeforeMs: number,
): ActivityPoint[] {
  return points.filter((p) => isLive(p, nowMs, ttlMs, deliveredBeforeMs));
}

/** Points -> one monotonic Sum per metric that has any. */
export function activityPointsToMetricData(
  points: readonly ActivityPoint[],
  opts: { readonly temporality: Temporality; readonly startTime: HrTime; readonly endTime: HrTime },
): MetricData[] {
  const out: MetricData[] = [];
  for (const kind of Object.keys(ACTIVITY_METRICS) as Kind[]) {
    const mine = points.filter((p) => p.kind === kind);
    if (mine.length === 0) continue;
    const m = ACTIVITY_METRICS[kind];
    out.push({
      descriptor: { name: m.name, description: m.description, unit: m.unit, valueType: m.valueType },
      aggregationTemporality:
        opts.temporality === "delta" ? AggregationTemporality.DELTA : AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.SUM,
      isMonotonic: true,
      dataPoints: mine.map((p) => ({
        startTime: opts.startTime,
        endTime: opts.endTime,
        attributes: { ...p.attributes } as Attributes,
        value: p.value,
      })),
    });
  }
  return out;
}
