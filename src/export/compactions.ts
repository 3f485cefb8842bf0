/**
 * Compaction series rows (ledger `compactions`, grouped; or one delta window) -> OpenTelemetry
 * MetricData: the monotonic counter `cline.compactions`. Pure: no SDK reader, no clock, no I/O.
 * The contract is docs/metrics.md ("cline.compactions"): one per compaction OBSERVED in the
 * agent's files, which hold only the latest one, so two compactions between two reads are one.
 */

import type { Attributes, HrTime } from "@opentelemetry/api";
import { ValueType } from "@opentelemetry/api";
import { AggregationTemporality, DataPointType, type MetricData } from "@opentelemetry/sdk-metrics";
import type { ProjectMode, Temporality } from "../config/config.ts";
import type { CompactionSeriesRow } from "../ledger/ledger.ts";
import type { RepositoryLookup } from "../vcs/repository.ts";
import { type Attrs, SERIES_DIMS_KEYS, seriesDimsAttributes } from "./attributes.ts";
import { foldPoints, keyedByAttributes } from "./fold.ts";
import { isLive } from "./translate.ts";

/** Attribute keys the compaction counter adds to the common ones. */
export const COMPACTION_ATTR = {
  strategy: "cline.compaction.strategy",
  reason: "cline.compaction.reason",
} as const;

/** Every attribute key a compaction data point can carry: nothing else is ever set. */
export const COMPACTION_ALLOWED_ATTRIBUTES: ReadonlySet<string> = new Set([
  ...SERIES_DIMS_KEYS,
  COMPACTION_ATTR.strategy,
  COMPACTION_ATTR.reason,
]);

/** The ledger's reason for a compaction whose agent records none (Cline's agentic ones). */
export const UNRECORDED_REASON = "unrecorded";

export const COMPACTION_METRIC = {
  name: "cline.compactions",
  unit: "{compaction}",
  description:
    "Context compactions observed in the agent's files (each agentic one is a summarizer model call whose usage Cline records nowhere)",
  valueType: ValueType.INT,
} as const;

export interface CompactionTranslateOptions {
  readonly project: ProjectMode;
  readonly includeSessionId: boolean;
  readonly repositoryOf?: RepositoryLookup | undefined;
  readonly constant?: Attrs | undefined;
}

export interface CompactionPoint {
  readonly attributes: Attrs;
  readonly value: number;
  readonly updatedMs: number;
  readonly lastEventMs: number;
}

/**
 * The attributes of a compaction series: the usual session / agent / project / model /
 * provider, the strategy, and the reason only where the agent recorded one.
 */
export function compactionAttributes(
  row: Pick<
    CompactionSeriesRow,
    "sessionId" | "agent" | "project" | "model" | "provider" | "client" | "strategy" | "reason"
  >,
  opts: CompactionTranslateOptions,
): Attrs {
  const out = seriesDimsAttributes(row, opts);
  out[COMPACTION_ATTR.strategy] = row.strategy;
  if (row.reason !== UNRECORDED_REASON && row.reason !== "") out[COMPACTION_ATTR.reason] = row.reason;
  return out;
}

/** Rows -> one point per attribute set; rows that coincide (session.id off, project none) are summed. */
export function translateCompactions(
  rows: readonly CompactionSeriesRow[],
  opts: CompactionTranslateOptions,
): CompactionPoint[] {
  return foldPoints(
    rows,
    (row) => (row.compactions === 0 ? undefined : keyedByAttributes(compactionAttributes(row, opts))),
    (row, attributes) => ({
      attributes,
      value: row.compactions,
      updatedMs: row.updatedMs,
      lastEventMs: row.lastEventMs,
    }),
    (p, row) => {
      p.value += row.compactions;
    },
  );
}

/** Cumulative points worth reporting: the same liveness rule as every other series (`isLive`). */
export function liveCompactionPoints(
  points: readonly CompactionPoint[],
  nowMs: number,
  ttlMs: number,
  deliveredBeforeMs: number,
): CompactionPoint[] {
  return points.filter((p) => isLive(p, nowMs, ttlMs, deliveredBeforeMs));
}

/** Points -> the `cline.compactions` monotonic Sum (none when there is nothing to report). */
export function compactionPointsToMetricData(
  points: readonly CompactionPoint[],
  opts: { readonly temporality: Temporality; readonly startTime: HrTime; readonly endTime: HrTime },
): MetricData[] {
  if (points.length === 0) return [];
  return [
    {
      descriptor: {
        name: COMPACTION_METRIC.name,
        description: COMPACTION_METRIC.description,
        unit: COMPACTION_METRIC.unit,
        valueType: COMPACTION_METRIC.valueType,
      },
      aggregationTemporality:
        opts.temporality === "delta" ? AggregationTemporality.DELTA : AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.SUM,
      isMonotonic: true,
      dataPoints: points.map((p) => ({
        startTime: opts.startTime,
        endTime: opts.endTime,
        attributes: { ...p.attributes } as Attributes,
        value: p.value,
      })),
    },
  ];
}
