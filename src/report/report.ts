import { computeCost, lookupPrice, type PriceTable } from "../cost/index.ts";
import type { GroupDim, Ledger } from "../ledger/ledger.ts";

export const GROUP_DIMS: readonly GroupDim[] = [
  "day",
  "model",
  "provider",
  "project",
  "session",
  "agent",
  "tool",
];

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
}

export type ReportRow = { [dim: string]: string | number } & Numbers;

export interface Report {
  readonly by: readonly GroupDim[];
  readonly rows: ReportRow[];
  readonly totals: Numbers;
}

/** Label for tokens of messages that made no tool call, in a per-tool view. */
export const NO_TOOL = "(none)";

const num = (v: unknown): number => (typeof v === "number" ? v : 0);

function numbers(r: Record<string, unknown>, toolCalls: number, cost: CostCell = NO_COST): Numbers {
  return {
    input: num(r.input),
    output: num(r.output),
    cacheRead: num(r.cacheRead),
    cacheWrite: num(r.cacheWrite),
    events: num(r.events),
    toolCalls,
    cost: cost.usd,
    unpricedEvents: cost.unpriced,
  };
}

interface CostCell {
  usd: number;
  unpriced: number;
}
const NO_COST: CostCell = { usd: 0, unpriced: 0 };

/**
 * Cost per group. Prices are per (provider, model) and the formula is linear in the
 * components, so each group's cost is the sum over its (provider, model) parts.
 */
function costByGroup(
  rows: Record<string, unknown>[],
  dims: readonly GroupDim[],
  prices: PriceTable,
): Map<string, CostCell> {
  const out = new Map<string, CostCell>();
  for (const r of rows) {
    const key = keyOf(r, dims);
    const cell = out.get(key) ?? { usd: 0, unpriced: 0 };
    const price = lookupPrice(prices, String(r.provider ?? ""), String(r.model ?? ""));
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

function keyOf(r: Record<string, unknown>, dims: readonly GroupDim[]): string {
  return JSON.stringify(dims.map((d) => r[d] ?? ""));
}

function labels(r: Record<string, unknown>, dims: readonly GroupDim[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of dims) out[d] = String(r[d] ?? "");
  return out;
}

/**
 * Build a report from the ledger. Totals are always the whole ledger. In a per-tool
 * view each call carries 1/n of its message's tokens, and a `(none)` row holds the
 * messages that made no call, so the rows still sum to the totals.
 */
export function buildReport(ledger: Ledger, by: readonly GroupDim[], prices: PriceTable): Report {
  const dims = [...new Set(by)];
  const totalEvents = ledger.groupedEvents([])[0] ?? {};
  const totalCalls = num(ledger.groupedCalls([])[0]?.toolCalls);
  const totalCost = costByGroup(ledger.groupedEvents(["provider", "model"]), [], prices).get(keyOf({}, []));
  const totals = numbers(totalEvents, totalCalls, totalCost);
  let rows: ReportRow[];
  if (dims.includes("tool")) {
    const others = dims.filter((d) => d !== "tool");
    const callCost = costByGroup(ledger.groupedCalls(withPriceDims(dims)), dims, prices);
    rows = ledger
      .groupedCalls(dims)
      .map((r) => ({ ...labels(r, dims), ...numbers(r, num(r.toolCalls), callCost.get(keyOf(r, dims))) }));
    const noCallCost = costByGroup(ledger.groupedEventsWithoutCalls(withPriceDims(others)), others, prices);
    for (const r of ledger.groupedEventsWithoutCalls(others)) {
      if (num(r.events) === 0) continue;
      rows.push({
        ...labels({ ...r, tool: NO_TOOL }, dims),
        ...numbers(r, 0, noCallCost.get(keyOf(r, others))),
      });
    }
  } else {
    const calls = new Map(ledger.groupedCalls(dims).map((r) => [keyOf(r, dims), num(r.toolCalls)]));
    const cost = costByGroup(ledger.groupedEvents(withPriceDims(dims)), dims, prices);
    rows = ledger.groupedEvents(dims).map((r) => ({
      ...labels(r, dims),
      ...numbers(r, calls.get(keyOf(r, dims)) ?? 0, cost.get(keyOf(r, dims))),
    }));
    // Calls in messages without metrics can form groups with no events at all.
    const seen = new Set(rows.map((r) => keyOf(r, dims)));
    for (const r of ledger.groupedCalls(dims)) {
      if (!seen.has(keyOf(r, dims))) {
        rows.push({ ...labels(r, dims), ...numbers({}, num(r.toolCalls)) });
      }
    }
  }
  return { by: dims, rows, totals };
}

const COLUMNS: readonly [keyof Numbers, string][] = [
  ["input", "Input"],
  ["output", "Output"],
  ["cacheRead", "Cache read"],
  ["cacheWrite", "Cache write"],
  ["events", "Requests"],
  ["toolCalls", "Tool calls"],
  ["cost", "Cost (USD)"],
];

/** A cost cell: `unknown` when nothing was priced, a `*` when part of the row was not. */
function fmtCost(n: Numbers): string {
  if (n.unpricedEvents > 0 && n.events === n.unpricedEvents) return "unknown";
  const usd = `$${n.cost.toFixed(n.cost < 1 ? 4 : 2)}`;
  return n.unpricedEvents > 0 ? `${usd}*` : usd;
}

function cell(n: Numbers, k: keyof Numbers): string {
  return k === "cost" ? fmtCost(n) : fmt(n[k]);
}

function fmt(n: number): string {
  return Number.isInteger(n)
    ? n.toLocaleString("en-US")
    : n.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });
}

/** A plain-text table: group columns left-aligned, numbers right-aligned, a totals line. */
export function renderTable(report: Report): string {
  const head = [...report.by.map((d) => d[0]?.toUpperCase() + d.slice(1)), ...COLUMNS.map(([, t]) => t)];
  const body = report.rows.map((r) => [
    ...report.by.map((d) => String(r[d] ?? "")),
    ...COLUMNS.map(([k]) => cell(r, k)),
  ]);
  const total = [
    ...report.by.map((_, i) => (i === 0 ? "Total" : "")),
    ...COLUMNS.map(([k]) => cell(report.totals, k)),
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
