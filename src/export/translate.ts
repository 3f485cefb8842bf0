/**
 * Ledger series rows -> metric points. Pure: no SDK, no clock, no I/O, so every rule of the
 * metric contract (docs/metrics.md) is table-tested here.
 */
import { ValueType } from "@opentelemetry/api";
import type { ProjectMode } from "../config/config.ts";
import { computeCost, type Price } from "../cost/index.ts";
import type { ToolSeriesRow, UsageSeriesRow } from "../ledger/ledger.ts";
import {
  ATTR,
  type Attrs,
  allowListed,
  renderProject,
  seriesKey,
  TOKEN_TYPES,
  type TokenType,
} from "./attributes.ts";

/** USD per million tokens for a model as served by a provider; undefined = unknown (never zero). */
export type PriceLookup = (provider: string, model: string) => Price | undefined;

/** A lookup that knows no price: every cost is unknown and counted in `cline.requests.unpriced`. */
export const NO_PRICES: PriceLookup = () => undefined;

export const METRICS = {
  tokenUsage: {
    name: "cline.token.usage",
    unit: "{token}",
    description: "Tokens used by Cline model calls, by type (input excludes cache reads and writes)",
    valueType: ValueType.INT,
  },
  requests: {
    name: "cline.requests",
    unit: "{request}",
    description: "Model responses that reported usage (usage events)",
    valueType: ValueType.INT,
  },
  toolCalls: {
    name: "cline.tool.calls",
    unit: "{call}",
    description: "Tool calls (tool_use blocks), by whether the paying response reported usage",
    valueType: ValueType.INT,
  },
  toolTokenUsage: {
    name: "cline.tool.token.usage",
    unit: "{token}",
    description: "Tokens of the paying model response attributed to each of its n tool calls (1/n each)",
    valueType: ValueType.DOUBLE,
  },
  costUsage: {
    name: "cline.cost.usage",
    unit: "USD",
    description: "Computed cost of model calls whose model has a known price",
    valueType: ValueType.DOUBLE,
  },
  toolCostUsage: {
    name: "cline.tool.cost.usage",
    unit: "USD",
    description: "Computed cost attributed to tool calls (1/n of the paying response each)",
    valueType: ValueType.DOUBLE,
  },
  requestsUnpriced: {
    name: "cline.requests.unpriced",
    unit: "{request}",
    description: "Model responses whose model has no known price: their cost is unknown, not zero",
    valueType: ValueType.INT,
  },
} as const;

export type MetricId = keyof typeof METRICS;
export const METRIC_IDS = Object.keys(METRICS) as MetricId[];

export interface TranslateOptions {
  readonly project: ProjectMode;
  readonly includeSessionId: boolean;
  readonly priceOf: PriceLookup;
}

/** One exported series: allow-listed attributes, its value, and when any of its rows last changed. */
export interface SeriesPoint {
  readonly attributes: Attrs;
  readonly value: number;
  readonly updatedMs: number;
}

export type Translated = ReadonlyMap<MetricId, readonly SeriesPoint[]>;

interface Components {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
}

function component(c: Components, t: TokenType): number {
  switch (t) {
    case "input":
      return c.input;
    case "output":
      return c.output;
    case "cache_read":
      return c.cacheRead;
    case "cache_write":
      return c.cacheWrite;
  }
}

type SeriesDims = Pick<UsageSeriesRow, "sessionId" | "agent" | "project" | "model" | "provider">;

/** The attributes every series carries, rendered per the project / session-id settings. */
export function commonAttributes(
  row: SeriesDims,
  opts: Pick<TranslateOptions, "project" | "includeSessionId">,
): Attrs {
  const out: Record<string, string> = {};
  if (opts.includeSessionId) out[ATTR.sessionId] = row.sessionId;
  out[ATTR.agent] = row.agent;
  const project = renderProject(row.project, opts.project);
  if (project !== undefined) out[ATTR.project] = project;
  out[ATTR.model] = row.model;
  out[ATTR.provider] = row.provider;
  return out;
}

class Accumulator {
  private readonly byMetric = new Map<
    MetricId,
    Map<string, { attributes: Attrs; value: number; updatedMs: number }>
  >();

  add(metric: MetricId, attrs: Attrs, value: number, updatedMs: number): void {
    const attributes = allowListed(attrs);
    const key = seriesKey(attributes);
    let series = this.byMetric.get(metric);
    if (series === undefined) {
      series = new Map();
      this.byMetric.set(metric, series);
    }
    const prev = series.get(key);
    // Series that coincide once an attribute is dropped (session.id off, project=none) are summed.
    if (prev === undefined) series.set(key, { attributes, value, updatedMs });
    else {
      prev.value += value;
      prev.updatedMs = Math.max(prev.updatedMs, updatedMs);
    }
  }

  result(): Map<MetricId, SeriesPoint[]> {
    const out = new Map<MetricId, SeriesPoint[]>();
    for (const id of METRIC_IDS) {
      const series = this.byMetric.get(id);
      if (series !== undefined && series.size > 0) out.set(id, [...series.values()]);
    }
    return out;
  }
}

/**
 * Every metric of the contract from ledger series rows (totals for cumulative export, or the
 * rows of one delta window). Cost is linear in the components, so it is computed from the
 * row's totals; a model without a price adds to `cline.requests.unpriced` instead.
 */
export function translate(
  usage: readonly UsageSeriesRow[],
  tools: readonly ToolSeriesRow[],
  opts: TranslateOptions,
): Map<MetricId, SeriesPoint[]> {
  const acc = new Accumulator();
  for (const row of usage) {
    const common = commonAttributes(row, opts);
    for (const t of TOKEN_TYPES)
      acc.add("tokenUsage", { ...common, [ATTR.type]: t }, component(row, t), row.updatedMs);
    acc.add("requests", common, row.events, row.updatedMs);
    const price = opts.priceOf(row.provider, row.model);
    if (price === undefined) acc.add("requestsUnpriced", common, row.events, row.updatedMs);
    else acc.add("costUsage", common, computeCost(row, price), row.updatedMs);
  }
  for (const row of tools) {
    const common = commonAttributes(row, opts);
    const withTool = { ...common, [ATTR.toolName]: row.toolName };
    acc.add(
      "toolCalls",
      { ...withTool, [ATTR.usageKnown]: String(row.usageKnown) },
      row.calls,
      row.updatedMs,
    );
    // A call whose message had no metrics has an unknown share: counted as a call, never as 0 tokens.
    if (!row.usageKnown) continue;
    for (const t of TOKEN_TYPES) {
      acc.add("toolTokenUsage", { ...withTool, [ATTR.type]: t }, component(row, t), row.updatedMs);
    }
    const price = opts.priceOf(row.provider, row.model);
    if (price !== undefined) acc.add("toolCostUsage", withTool, computeCost(row, price), row.updatedMs);
  }
  return acc.result();
}

/**
 * Cumulative series worth reporting: a series is dropped only when it has been idle longer
 * than `ttlMs` AND its current value was already delivered (`deliveredBeforeMs` is the ledger
 * read time of the last successful export: every change older than it was in that export).
 */
export function liveSeries(
  points: readonly SeriesPoint[],
  nowMs: number,
  ttlMs: number,
  deliveredBeforeMs: number,
): SeriesPoint[] {
  const idleSince = nowMs - ttlMs;
  return points.filter((p) => p.updatedMs >= idleSince || p.updatedMs >= deliveredBeforeMs);
}
