import { computeCost, lookupPrice, type PriceTable } from "../cost/lookup.ts";
import type { Ledger } from "../ledger/ledger.ts";
import type { GroupDim, SortKey } from "./dims.ts";
import { groupedInteger } from "./numbers.ts";
import { type GroupedQuery, groupedQuery, type Row } from "./query.ts";
import { localZone, type Zone } from "./time/zone.ts";

export { GROUP_DIMS } from "./dims.ts";

export interface Numbers {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  events: number;
  toolCalls: number;
  /** USD over the priced events only. */
  cost: number;
  /** Events whose model has no known price: their cost is unknown, not zero. */
  unpricedEvents: number;
  /** Lines added and removed by the ACCEPTED file edits (what Cline delivered). */
  linesAdded: number;
  linesRemoved: number;
  /** File edits by decision (failed: did not apply; neither accepted nor rejected). */
  editsAccepted: number;
  editsRejected: number;
  editsFailed: number;
  /** Active time in seconds, the user's and the agent's (docs/metrics.md "Active time"). */
  activeUserSeconds: number;
  activeAgentSeconds: number;
  /** Commits and pull requests made by the agent's commands that succeeded. */
  commits: number;
  pullRequests: number;
}

/** The edit numbers of a grouped edits row (or zeros). */
const EDIT_KEYS = ["linesAdded", "linesRemoved", "editsAccepted", "editsRejected", "editsFailed"] as const;
/** The activity numbers of a grouped activity row (or zeros). */
const ACTIVITY_KEYS = ["activeUserSeconds", "activeAgentSeconds", "commits", "pullRequests"] as const;

/**
 * accepted / (accepted + rejected), undefined when no edit was decided either way. A failed edit
 * (it did not apply) was neither accepted nor rejected by anyone, so it is in neither count.
 */
export function acceptanceRate(n: Numbers): number | undefined {
  const decided = n.editsAccepted + n.editsRejected;
  return decided === 0 ? undefined : n.editsAccepted / decided;
}

export type ReportRow = { [dim: string]: string | number } & Numbers;

export interface Report {
  readonly by: readonly GroupDim[];
  readonly rows: ReportRow[];
  /** Everything in the window, whatever `--top` kept. */
  readonly totals: Numbers;
  /** The groups `--top` left out, summed (rows + others = totals); absent when none were. */
  readonly others?: Numbers & { readonly groups: number };
}

export interface ReportOptions {
  /** Events with fromMs <= message time < toMs; the whole ledger by default. */
  readonly fromMs?: number;
  readonly toMs?: number;
  /** The zone of day, week and month (default: the machine's). */
  readonly zone?: Zone;
  readonly sort?: SortKey;
  /** Keep the first N rows after sorting; the rest are summed into `others`. */
  readonly top?: number;
}

/** Label for tokens of messages that made no tool call, in a per-tool view. */
export const NO_TOOL = "(none)";

const num = (v: unknown): number => (typeof v === "number" ? v : 0);

function numbers(r: Row, toolCalls: number, cost: CostCell = NO_COST): Numbers {
  return {
    input: num(r.input),
    output: num(r.output),
    cacheRead: num(r.cacheRead),
    cacheWrite: num(r.cacheWrite),
    events: num(r.events),
    toolCalls,
    cost: cost.usd,
    unpricedEvents: cost.unpriced,
    linesAdded: 0,
    linesRemoved: 0,
    editsAccepted: 0,
    editsRejected: 0,
    editsFailed: 0,
    activeUserSeconds: 0,
    activeAgentSeconds: 0,
    commits: 0,
    pullRequests: 0,
  };
}

/** Sets `n`'s edit numbers from a grouped edits row. */
function putEdits(n: Numbers, r: Row | undefined): Numbers {
  if (r !== undefined) for (const k of EDIT_KEYS) n[k] = num(r[k]);
  return n;
}

/** Sets `n`'s activity numbers from a grouped activity row. */
function putActivity(n: Numbers, r: Row | undefined): Numbers {
  if (r !== undefined) for (const k of ACTIVITY_KEYS) n[k] = num(r[k]);
  return n;
}

/** As withEditRows, for the activity rows. */
function withActivityRows(
  rows: ReportRow[],
  activity: readonly Row[],
  dims: readonly GroupDim[],
): ReportRow[] {
  const byKey = new Map(rows.map((r) => [keyOf(r, dims), r]));
  for (const a of activity) {
    const row = byKey.get(keyOf(a, dims));
    if (row !== undefined) putActivity(row, a);
    else rows.push({ ...labels(a, dims), ...putActivity(numbers({}, 0), a) });
  }
  return rows;
}

/**
 * The edit numbers onto the rows of the same group; a group with edits but no row (its tokens
 * outside the window or unknown) becomes a row of its own, so the rows still sum to the totals.
 */
function withEditRows(rows: ReportRow[], edits: readonly Row[], dims: readonly GroupDim[]): ReportRow[] {
  const byKey = new Map(rows.map((r) => [keyOf(r, dims), r]));
  for (const e of edits) {
    const row = byKey.get(keyOf(e, dims));
    if (row !== undefined) putEdits(row, e);
    else rows.push({ ...labels(e, dims), ...putEdits(numbers({}, 0), e) });
  }
  return rows;
}

/** The price table, asked for when a row needs a price (see buildReportWithoutPrices). */
type Prices = () => PriceTable;

interface CostCell {
  usd: number;
  unpriced: number;
}
const NO_COST: CostCell = { usd: 0, unpriced: 0 };

/**
 * Cost per group. Prices are per (provider, model) and the formula is linear in the
 * components, so each group's cost is the sum over its (provider, model) parts.
 */
function costByGroup(rows: Row[], dims: readonly GroupDim[], prices: Prices): Map<string, CostCell> {
  const out = new Map<string, CostCell>();
  for (const r of rows) {
    const key = keyOf(r, dims);
    const cell = out.get(key) ?? { usd: 0, unpriced: 0 };
    const price = lookupPrice(prices(), String(r.provider ?? ""), String(r.model ?? ""));
    if (price === undefined) cell.unpriced += num(r.events);
    else {
      cell.usd += computeCost(
        {
          input: num(r.input),
          output: num(r.output),
          cacheRead: num(r.cacheRead),
          cacheWrite: num(r.cacheWrite),
        },
        price,
      );
    }
    out.set(key, cell);
  }
  return out;
}

function withPriceDims(dims: readonly GroupDim[]): GroupDim[] {
  return [...new Set<GroupDim>([...dims, "provider", "model"])];
}

function keyOf(r: Row, dims: readonly GroupDim[]): string {
  return JSON.stringify(dims.map((d) => r[d] ?? ""));
}

function labels(r: Row, dims: readonly GroupDim[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of dims) out[d] = String(r[d] ?? "");
  return out;
}

/** Tokens of all four types. */
export function tokensOf(n: Numbers): number {
  return n.input + n.output + n.cacheRead + n.cacheWrite;
}

const SORT_VALUE: Record<SortKey, (n: Numbers) => number> = {
  cost: (n) => n.cost,
  tokens: tokensOf,
  requests: (n) => n.events,
};

/** Add b's numbers into a. */
function addInto(a: Numbers, b: Numbers): void {
  for (const k of Object.keys(a) as (keyof Numbers)[]) a[k] += b[k];
}

/** All-zero numbers: the start of every sum. */
export const zeroNumbers = (): Numbers => ({
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  events: 0,
  toolCalls: 0,
  cost: 0,
  unpricedEvents: 0,
  linesAdded: 0,
  linesRemoved: 0,
  editsAccepted: 0,
  editsRejected: 0,
  editsFailed: 0,
  activeUserSeconds: 0,
  activeAgentSeconds: 0,
  commits: 0,
  pullRequests: 0,
});

/**
 * Rows sorted by `sort` (largest first; equal ones keep their order) and cut to `top`; what is cut
 * is summed. `top` without `sort` sorts by cost.
 */
export function rankRows(
  rows: readonly ReportRow[],
  sort: SortKey | undefined,
  top: number | undefined,
): { rows: ReportRow[]; others?: Numbers & { groups: number } } {
  const key = sort ?? (top !== undefined ? "cost" : undefined);
  const sorted =
    key === undefined ? [...rows] : [...rows].sort((a, b) => SORT_VALUE[key](b) - SORT_VALUE[key](a));
  if (top === undefined || sorted.length <= top) return { rows: sorted };
  const others = zeroNumbers();
  for (const r of sorted.slice(top)) addInto(others, r);
  return { rows: sorted.slice(0, top), others: { ...others, groups: sorted.length - top } };
}

function rowsOf(query: GroupedQuery, dims: readonly GroupDim[], prices: Prices): ReportRow[] {
  const rows = withEditRows(usageRowsOf(query, dims, prices), query("edits", dims), dims);
  return withActivityRows(rows, query("activity", dims), dims);
}

function usageRowsOf(query: GroupedQuery, dims: readonly GroupDim[], prices: Prices): ReportRow[] {
  if (dims.includes("tool")) {
    const others = dims.filter((d) => d !== "tool");
    const callCost = costByGroup(query("calls", withPriceDims(dims)), dims, prices);
    const rows: ReportRow[] = query("calls", dims).map((r) => ({
      ...labels(r, dims),
      ...numbers(r, num(r.toolCalls), callCost.get(keyOf(r, dims))),
    }));
    const noCallCost = costByGroup(query("events-without-calls", withPriceDims(others)), others, prices);
    for (const r of query("events-without-calls", others)) {
      if (num(r.events) === 0) continue;
      rows.push({
        ...labels({ ...r, tool: NO_TOOL }, dims),
        ...numbers(r, 0, noCallCost.get(keyOf(r, others))),
      });
    }
    return rows;
  }
  const calls = new Map(query("calls", dims).map((r) => [keyOf(r, dims), num(r.toolCalls)]));
  const cost = costByGroup(query("events", withPriceDims(dims)), dims, prices);
  const rows: ReportRow[] = query("events", dims).map((r) => ({
    ...labels(r, dims),
    ...numbers(r, calls.get(keyOf(r, dims)) ?? 0, cost.get(keyOf(r, dims))),
  }));
  // Calls in messages without metrics can form groups with no events at all.
  const seen = new Set(rows.map((r) => keyOf(r, dims)));
  for (const r of query("calls", dims)) {
    if (!seen.has(keyOf(r, dims))) rows.push({ ...labels(r, dims), ...numbers({}, num(r.toolCalls)) });
  }
  return rows;
}

/**
 * Build a report from the ledger over a window of message times. Totals are the whole window.
 * In a per-tool view each call carries 1/n of its message's tokens, and a `(none)` row holds the
 * messages that made no call, so the rows still sum to the totals.
 */
export function buildReport(
  ledger: Ledger,
  by: readonly GroupDim[],
  prices: PriceTable,
  opts: ReportOptions = {},
): Report {
  return build(ledger, by, () => prices, opts);
}

const PRICES_NEEDED = Symbol("prices needed");

/**
 * The report when no row of it needs a price (a window without usage: an idle `report` of an
 * old history), else undefined: then build it with buildReport. Building Cline's price table
 * (6,384 models) costs more than the rest of such a report. Decided by the rows themselves, so a
 * ledger that another process writes meanwhile cannot leave a row unpriced.
 */
export function buildReportWithoutPrices(
  ledger: Ledger,
  by: readonly GroupDim[],
  opts: ReportOptions = {},
): Report | undefined {
  try {
    return build(
      ledger,
      by,
      () => {
        throw PRICES_NEEDED;
      },
      opts,
    );
  } catch (e) {
    if (e === PRICES_NEEDED) return undefined;
    throw e;
  }
}

function build(ledger: Ledger, by: readonly GroupDim[], prices: Prices, opts: ReportOptions): Report {
  const dims = [...new Set(by)];
  const zone = opts.zone ?? localZone();
  const query = groupedQuery(
    ledger.report,
    opts.fromMs ?? Number.MIN_SAFE_INTEGER,
    opts.toMs ?? Number.MAX_SAFE_INTEGER,
    zone,
  );
  const totalEvents = query("events", [])[0] ?? {};
  const totalCalls = num(query("calls", [])[0]?.toolCalls);
  const totalCost = costByGroup(query("events", ["provider", "model"]), [], prices).get(keyOf({}, []));
  const totals = putActivity(
    putEdits(numbers(totalEvents, totalCalls, totalCost), query("edits", [])[0]),
    query("activity", [])[0],
  );
  const ranked = rankRows(rowsOf(query, dims, prices), opts.sort, opts.top);
  return { by: dims, rows: ranked.rows, totals, ...(ranked.others ? { others: ranked.others } : {}) };
}

type Column = keyof Numbers | "acceptanceRate";

const COLUMNS: readonly [Column, string][] = [
  ["input", "Input"],
  ["output", "Output"],
  ["cacheRead", "Cache read"],
  ["cacheWrite", "Cache write"],
  ["events", "Requests"],
  ["toolCalls", "Tool calls"],
  ["cost", "Cost (USD)"],
];

/** Shown when the report holds file edits (a ledger without any keeps its narrower table). */
const EDIT_COLUMNS: readonly [Column, string][] = [
  ["linesAdded", "Lines +"],
  ["linesRemoved", "Lines -"],
  ["editsAccepted", "Accepted"],
  ["editsRejected", "Rejected"],
  ["acceptanceRate", "Accept rate"],
];

/** Shown when the report holds activity (active time, commits, pull requests). */
const ACTIVITY_COLUMNS: readonly [Column, string][] = [
  ["activeUserSeconds", "Active user"],
  ["activeAgentSeconds", "Active agent"],
  ["commits", "Commits"],
  ["pullRequests", "PRs"],
];

function hasActivity(n: Numbers): boolean {
  return n.activeUserSeconds + n.activeAgentSeconds + n.commits + n.pullRequests > 0;
}

/** Seconds as `1h 02m`, `3m 05s` or `42s`. */
function fmtDuration(s: number): string {
  const t = Math.round(s);
  if (t < 60) return `${t}s`;
  const m = Math.floor(t / 60);
  if (m < 60) return `${m}m ${String(t % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

/** Whether any edit was counted (accepted, rejected or failed). */
function hasEdits(n: Numbers): boolean {
  return n.editsAccepted + n.editsRejected + n.editsFailed > 0;
}

/** Every priced event's cost is known; none of the events was priced: the cost is unknown. */
export function costUnknown(n: Numbers): boolean {
  return n.unpricedEvents > 0 && n.events === n.unpricedEvents;
}

/** A cost cell: `unknown` when nothing was priced, a `*` when part of the row was not. */
function fmtCost(n: Numbers): string {
  if (costUnknown(n)) return "unknown";
  const usd = `$${n.cost.toFixed(n.cost < 1 ? 4 : 2)}`;
  return n.unpricedEvents > 0 ? `${usd}*` : usd;
}

function cell(n: Numbers, k: Column): string {
  if (k === "acceptanceRate") {
    const r = acceptanceRate(n);
    return r === undefined ? "-" : `${(r * 100).toFixed(1)}%`;
  }
  if (k === "activeUserSeconds" || k === "activeAgentSeconds") return fmtDuration(n[k]);
  return k === "cost" ? fmtCost(n) : fmt(n[k]);
}

function fmt(n: number): string {
  return Number.isInteger(n)
    ? groupedInteger(n)
    : n.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });
}

/** The label of the `others` row in a table or CSV. */
export function othersLabel(groups: number): string {
  return `(${groups} more)`;
}

/** A plain-text table: group columns left-aligned, numbers right-aligned, a totals line. */
export function renderTable(report: Report): string {
  const columns = [
    ...COLUMNS,
    ...(hasEdits(report.totals) ? EDIT_COLUMNS : []),
    ...(hasActivity(report.totals) ? ACTIVITY_COLUMNS : []),
  ];
  const head = [...report.by.map((d) => d[0]?.toUpperCase() + d.slice(1)), ...columns.map(([, t]) => t)];
  const body = report.rows.map((r) => [
    ...report.by.map((d) => String(r[d] ?? "")),
    ...columns.map(([k]) => cell(r, k)),
  ]);
  const o = report.others;
  if (o !== undefined && report.by.length > 0) {
    body.push([
      ...report.by.map((_, i) => (i === 0 ? othersLabel(o.groups) : "")),
      ...columns.map(([k]) => cell(o, k)),
    ]);
  }
  const total = [
    ...report.by.map((_, i) => (i === 0 ? "Total" : "")),
    ...columns.map(([k]) => cell(report.totals, k)),
  ];
  const all = [head, ...body, total];
  const widths = head.map((_, i) => Math.max(...all.map((row) => (row[i] ?? "").length)));
  const left = report.by.length;
  const line = (row: string[]) =>
    row.map((c, i) => (i < left ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ");
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  const lines = [line(head), rule, ...body.map(line), rule, line(total)];
  if (report.totals.unpricedEvents > 0) {
    lines.push(
      `* ${report.totals.unpricedEvents} request(s) used a model with no known price: their cost is unknown, not zero (add it with --prices).`,
    );
  }
  return lines.join("\n");
}
