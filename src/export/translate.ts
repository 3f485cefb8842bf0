/**
 * Ledger series rows -> metric points. Pure: no SDK, no clock, no I/O, so every rule of the
 * metric contract (docs/metrics.md) is table-tested here.
 */
import { ValueType } from "@opentelemetry/api";
import type { ProjectMode } from "../config/config.ts";
import { computeCost, type Price } from "../cost/index.ts";
import type { EditSeriesRow, ToolSeriesRow, UsageSeriesRow } from "../ledger/ledger.ts";
import type { ToolOutcomeRow } from "../ledger/tool-outcomes.ts";
import type { RepositoryLookup } from "../vcs/repository.ts";
import {
  ATTR,
  type Attrs,
  allowListed,
  putClient,
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
    description:
      "Tool calls (tool_use blocks) counted once final, by outcome (success, failure, rejected, unknown) and whether the paying response reported usage",
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
  linesOfCode: {
    name: "cline.lines_of_code",
    unit: "{line}",
    description:
      "Lines added and removed by the file edits Cline proposed, by decision (accepted, rejected); cline.lines.exact=false where the files do not hold all an edit changed",
    valueType: ValueType.INT,
  },
  editDecisions: {
    name: "cline.code_edit.decisions",
    unit: "{edit}",
    description:
      "File edits Cline proposed, by tool, operation, decision (accepted, rejected, failed), source and language",
    valueType: ValueType.INT,
  },
} as const;

export type MetricId = keyof typeof METRICS;
export const METRIC_IDS = Object.keys(METRICS) as MetricId[];

export interface TranslateOptions {
  readonly project: ProjectMode;
  readonly includeSessionId: boolean;
  readonly priceOf: PriceLookup;
  /** `vcs.*` of a session's workspace, when repositories go on metric series. */
  readonly repositoryOf?: RepositoryLookup | undefined;
  /**
   * The copied resource attributes (src/export/team-attributes.ts), the same on every series of
   * the process: added to each series' attributes once, so they never merge or split series.
   */
  readonly constant?: Attrs | undefined;
}

/** When a series last changed (ingestion time) and when its newest event happened (event time). */
export interface SeriesTimes {
  readonly updatedMs: number;
  readonly lastEventMs: number;
}

/** One exported series: allow-listed attributes, its value, and its times. */
export interface SeriesPoint extends SeriesTimes {
  readonly attributes: Attrs;
  readonly value: number;
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

type SeriesDims = Pick<UsageSeriesRow, "sessionId" | "agent" | "project" | "model" | "provider" | "client">;

/** The attributes every series carries, rendered per the project / session-id settings. */
export function commonAttributes(
  row: SeriesDims,
  opts: Pick<TranslateOptions, "project" | "includeSessionId" | "repositoryOf">,
): Attrs {
  const out: Record<string, string> = {};
  if (opts.includeSessionId) out[ATTR.sessionId] = row.sessionId;
  out[ATTR.agent] = row.agent;
  const project = renderProject(row.project, opts.project);
  if (project !== undefined) out[ATTR.project] = project;
  out[ATTR.model] = row.model;
  out[ATTR.provider] = row.provider;
  putClient(out, row.client);
  if (opts.repositoryOf !== undefined) Object.assign(out, opts.repositoryOf(row.project).series);
  return out;
}

type ExtraKey =
  | (typeof ATTR)["type"]
  | (typeof ATTR)["toolName"]
  | (typeof ATTR)["usageKnown"]
  | (typeof ATTR)["toolOutcome"]
  | (typeof ATTR)["operation"]
  | (typeof ATTR)["decision"]
  | (typeof ATTR)["source"]
  | (typeof ATTR)["language"]
  | (typeof ATTR)["linesExact"];

/** A row's allow-listed common attributes and a short id of their series key, computed once per row. */
interface Base {
  readonly attrs: Attrs;
  readonly key: string;
}

class Accumulator {
  /** Long attribute keys are hashed once per row, then stand in as short ids (fast map keys). */
  private readonly interned = new Map<string, string>();

  base(row: SeriesDims, opts: TranslateOptions): Base {
    const own = allowListed(commonAttributes(row, opts));
    const long = seriesKey(own);
    let key = this.interned.get(long);
    if (key === undefined) {
      key = String(this.interned.size);
      this.interned.set(long, key);
    }
    // A point's own attribute wins over a copied one of the same name.
    const attrs = opts.constant === undefined ? own : { ...opts.constant, ...own };
    return { attrs, key };
  }

  private readonly byMetric = new Map<
    MetricId,
    Map<string, { attributes: Attrs; value: number; updatedMs: number; lastEventMs: number }>
  >();

  /**
   * `extra` keys are contract attributes by type, and the common part went through the
   * allow-list in `base`: nothing else can reach an exported point.
   */
  add(
    metric: MetricId,
    b: Base,
    extra: readonly (readonly [ExtraKey, string])[],
    value: number,
    times: SeriesTimes,
  ): void {
    let key = b.key;
    for (const [k, v] of extra) key += `\u0000${k}=${v}`;
    let series = this.byMetric.get(metric);
    if (series === undefined) {
      series = new Map();
      this.byMetric.set(metric, series);
    }
    const prev = series.get(key);
    // Series that coincide once an attribute is dropped (session.id off, project=none) are summed.
    if (prev !== undefined) {
      prev.value += value;
      if (times.updatedMs > prev.updatedMs) prev.updatedMs = times.updatedMs;
      if (times.lastEventMs > prev.lastEventMs) prev.lastEventMs = times.lastEventMs;
      return;
    }
    let attributes = b.attrs;
    if (extra.length > 0) {
      const a: Record<string, string> = { ...b.attrs };
      for (const [k, v] of extra) a[k] = v;
      attributes = a;
    }
    series.set(key, { attributes, value, updatedMs: times.updatedMs, lastEventMs: times.lastEventMs });
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

const TYPE_EXTRA = TOKEN_TYPES.map((t) => [[ATTR.type, t] as const] as const);

/**
 * Every metric of the contract from ledger series rows (totals for cumulative export, or the
 * rows of one delta window). Cost is linear in the components, so it is computed from the
 * row's totals; a model without a price adds to `cline.requests.unpriced` instead. The rows
 * are consumed one at a time (a statement's iterator): none of them is kept. `cline.tool.calls`
 * comes from the final calls by outcome (`outcomes`), the tool tokens and cost from `tools`
 * (counted when a call is first read).
 */
export function translate(
  usage: Iterable<UsageSeriesRow>,
  tools: Iterable<ToolSeriesRow>,
  opts: TranslateOptions,
  outcomes: Iterable<ToolOutcomeRow> = [],
  edits: Iterable<EditSeriesRow> = [],
): Map<MetricId, SeriesPoint[]> {
  const acc = new Accumulator();
  for (const row of usage) {
    const b = acc.base(row, opts);
    TOKEN_TYPES.forEach((t, i) => {
      acc.add("tokenUsage", b, TYPE_EXTRA[i] as (typeof TYPE_EXTRA)[number], component(row, t), row);
    });
    acc.add("requests", b, [], row.events, row);
    const price = opts.priceOf(row.provider, row.model);
    if (price === undefined) acc.add("requestsUnpriced", b, [], row.events, row);
    else acc.add("costUsage", b, [], computeCost(row, price), row);
  }
  for (const row of tools) {
    const b = acc.base(row, opts);
    const tool = [ATTR.toolName, row.toolName] as const;
    // A call whose message had no metrics has an unknown share: counted as a call, never as 0 tokens.
    if (!row.usageKnown) continue;
    TOKEN_TYPES.forEach((t) => {
      acc.add("toolTokenUsage", b, [tool, [ATTR.type, t]], component(row, t), row);
    });
    const price = opts.priceOf(row.provider, row.model);
    if (price !== undefined) acc.add("toolCostUsage", b, [tool], computeCost(row, price), row);
  }
  for (const row of outcomes) {
    acc.add(
      "toolCalls",
      acc.base(row, opts),
      [
        [ATTR.toolName, row.toolName],
        [ATTR.usageKnown, String(row.usageKnown)],
        [ATTR.toolOutcome, row.outcome],
      ],
      row.calls,
      row,
    );
  }
  for (const row of edits) addEdits(acc, acc.base(row, opts), row);
  return acc.result();
}

/** Decisions for which lines are counted: a failed edit changed nothing. */
const LINE_DECISIONS: ReadonlySet<string> = new Set(["accepted", "rejected"]);

/**
 * One edit series: `cline.code_edit.decisions` (every decision), and `cline.lines_of_code` by
 * type for accepted and rejected edits, its inexact part apart (`cline.lines.exact=false`, only
 * where there is one: no series of zeros for every exact edit series).
 */
function addEdits(acc: Accumulator, b: Base, row: EditSeriesRow): void {
  const dims = [
    [ATTR.toolName, row.toolName],
    [ATTR.operation, row.operation],
    [ATTR.decision, row.decision],
    [ATTR.source, row.source],
    [ATTR.language, row.language],
  ] as const;
  acc.add("editDecisions", b, dims, row.edits, row);
  if (!LINE_DECISIONS.has(row.decision)) return;
  const lines = [
    ["added", row.linesAdded, row.inexactLinesAdded],
    ["removed", row.linesRemoved, row.inexactLinesRemoved],
  ] as const;
  for (const [type, all, inexact] of lines) {
    acc.add("linesOfCode", b, [...dims, [ATTR.type, type], [ATTR.linesExact, "true"]], all - inexact, row);
    if (row.inexactEdits > 0)
      acc.add("linesOfCode", b, [...dims, [ATTR.type, type], [ATTR.linesExact, "false"]], inexact, row);
  }
}

/**
 * Whether a cumulative series is worth reporting: its newest EVENT is within `ttlMs` of now, OR
 * its current value has not been delivered yet (`deliveredBeforeMs` is the ledger read time of
 * the last successful export: every change ingested before it was in that export). Event time,
 * not ingestion time: a first run over a long history makes every series change now, and those
 * must be delivered once, not re-sent for a whole TTL.
 */
export function isLive(p: SeriesTimes, nowMs: number, ttlMs: number, deliveredBeforeMs: number): boolean {
  return p.lastEventMs >= nowMs - ttlMs || p.updatedMs >= deliveredBeforeMs;
}

/** The cumulative series worth reporting (`isLive`). */
export function liveSeries(
  points: readonly SeriesPoint[],
  nowMs: number,
  ttlMs: number,
  deliveredBeforeMs: number,
): SeriesPoint[] {
  return points.filter((p) => isLive(p, nowMs, ttlMs, deliveredBeforeMs));
}
