/**
 * `report`'s view, resolved once from its flags into a frozen object: the time window, the zone,
 * grouping, ranking, output format and budget. Every bad value is one ConfigError line naming the
 * flag and what it accepts (exit 2).
 */
import { ConfigError } from "../config/parse.ts";
import type { GroupDim, SortKey } from "./dims.ts";
import { type Bound, parseTimeArg, TIME_ARG_HELP } from "./time/parse.ts";
import { PERIODS, type Period, periodAt } from "./time/periods.ts";
import { formatWall, localZone, type Zone, zoneNamed } from "./time/zone.ts";

/** What `report` with none of --by, --since, --until shows: the last 30 days by day. */
export const DEFAULT_VIEW_DAYS = 30;

export interface ReportFlags {
  readonly by?: readonly GroupDim[];
  readonly since?: string;
  readonly until?: string;
  readonly timezone?: string;
  readonly json?: boolean;
  readonly csv?: boolean;
  readonly top?: string;
  readonly sort?: SortKey;
  readonly budget?: string;
  readonly period?: Period;
}

export interface BudgetView {
  readonly amount: number;
  readonly period: Period;
  readonly label: string;
}

export interface ReportView {
  readonly by: readonly GroupDim[];
  readonly zone: Zone;
  /** [fromMs, toMs) of message times; undefined = unbounded. */
  readonly fromMs: number | undefined;
  readonly toMs: number | undefined;
  readonly format: "table" | "json" | "csv";
  readonly sort: SortKey | undefined;
  readonly top: number | undefined;
  readonly budget: BudgetView | undefined;
  /** The default view was chosen (no --by, --since, --until). */
  readonly isDefault: boolean;
  readonly nowMs: number;
}

function fail(message: string): never {
  throw new ConfigError(message);
}

function timeFlag(flag: string, text: string, bound: Bound, nowMs: number, zone: Zone): number {
  const r = parseTimeArg(text, bound, nowMs, zone);
  if ("error" in r) fail(`${flag}: ${r.error}; it accepts ${TIME_ARG_HELP}`);
  return r.ms;
}

export function resolveReportView(f: ReportFlags, nowMs: number): ReportView {
  const zone = f.timezone === undefined ? localZone() : zoneNamed(f.timezone);
  if (zone === undefined)
    fail(
      `--timezone: unknown time zone ${JSON.stringify(f.timezone)}; it accepts an IANA name such as Europe/Berlin, America/New_York or UTC`,
    );
  if (f.json && f.csv) fail("--csv: cannot be combined with --json; pick one output format");
  let top: number | undefined;
  if (f.top !== undefined) {
    if (!/^\d+$/.test(f.top.trim()) || Number(f.top) < 1)
      fail(`--top: ${JSON.stringify(f.top)} is not a count; it accepts a whole number of rows, 1 or more`);
    top = Number(f.top);
  }
  let fromMs = f.since === undefined ? undefined : timeFlag("--since", f.since, "since", nowMs, zone);
  let toMs = f.until === undefined ? undefined : timeFlag("--until", f.until, "until", nowMs, zone);
  if (fromMs !== undefined && toMs !== undefined && toMs <= fromMs) {
    fail(
      `--until: ${formatWall(zone, toMs)} is not after --since ${formatWall(zone, fromMs)} (${zone.name}); it accepts a time after --since`,
    );
  }
  let by = [...new Set(f.by ?? [])];
  let budget: BudgetView | undefined;
  if (f.period !== undefined && f.budget === undefined)
    fail(`--period: needs --budget <USD>; it accepts ${PERIODS.join(", ")} with a budget`);
  if (f.budget !== undefined) {
    const text = f.budget.trim().replace(/^\$/, "");
    const amount = Number(text);
    if (text === "" || !Number.isFinite(amount) || amount < 0)
      fail(
        `--budget: ${JSON.stringify(f.budget)} is not an amount; it accepts US dollars, 0 or more (e.g. 20 or 12.50)`,
      );
    if (f.since !== undefined || f.until !== undefined)
      fail("--budget: covers the current --period; it cannot be combined with --since or --until");
    if (f.csv) fail("--csv: cannot be combined with --budget; use --json for a machine-readable budget");
    const period = f.period ?? "day";
    const bounds = periodAt(zone, nowMs, period);
    fromMs = bounds.startMs;
    toMs = bounds.endMs;
    budget = { amount, period, label: bounds.label };
  }
  const isDefault =
    budget === undefined && by.length === 0 && f.since === undefined && f.until === undefined && !f.json;
  if (isDefault) {
    fromMs = timeFlag("--since", `${DEFAULT_VIEW_DAYS}d`, "since", nowMs, zone);
    by = ["day"];
  }
  return Object.freeze({
    by,
    zone,
    fromMs,
    toMs,
    format: f.json ? "json" : f.csv ? "csv" : "table",
    sort: f.sort,
    top,
    budget,
    isDefault,
    nowMs,
  });
}

/** The window in words, for the line above a table. */
export function describeWindow(v: ReportView): string | undefined {
  if (v.fromMs === undefined && v.toMs === undefined) return undefined;
  const from = v.fromMs === undefined ? "the beginning" : formatWall(v.zone, v.fromMs);
  const to = v.toMs === undefined ? "now" : formatWall(v.zone, v.toMs);
  const head = v.isDefault ? `Last ${DEFAULT_VIEW_DAYS} days` : "Usage";
  return `${head}: ${from} to ${to} (${v.zone.name})${v.by.length ? `, by ${v.by.join(", ")}` : ""}`;
}
