import type Database from "better-sqlite3";
import { ROLLUP_BUCKET_MS } from "../tables/report-rollup-v3.ts";

/** The schema version that has `report_rollup` (tables/report-rollup-v3.ts). */
export const ROLLUP_VERSION = 3;
/** The schema version whose rollup also sums edits and activity (tables/report-rollup-delivered-v4.ts). */
export const DELIVERED_ROLLUP_VERSION = 4;

/**
 * From schema v6 `edits` is a view of the packs (tables/edit-packs-v6.ts): a query by time names the
 * packs whose span meets its ranges (their ts_min / ts_max indexes), so it expands those, not every
 * pack. Each `[from, to)` is a pair of parameter names.
 */
function packsMeeting(ranges: readonly (readonly [string, string])[]): string {
  const meets = ranges.map(([from, to]) => `(ts_min < @${to} AND ts_max >= @${from})`).join(" OR ");
  return ` AND id IN (SELECT id FROM edit_packs WHERE ${meets})`;
}

/** The window's parameters (bucketMs only when grouped by bucket: it is a parameter of that column only). */
function paramsOf(dims: readonly LedgerDim[], window: ReportWindow): Record<string, number> {
  const params: Record<string, number> = { fromMs: window.fromMs, toMs: window.toMs };
  if (dims.includes("bucket")) params.bucketMs = Math.max(1, Math.trunc(window.bucketMs));
  return params;
}

/**
 * A column `report` can group by. Each maps to a fixed column expression, never user text.
 * `bucket` is the start (ms) of the UTC bucket of width `bucketMs` holding the event: the report
 * turns buckets into days, weeks and months of an IANA zone, which SQLite cannot do itself.
 */
export type LedgerDim = "bucket" | "model" | "provider" | "project" | "session" | "agent" | "tool" | "client";

const DIM_SQL: Record<LedgerDim, string> = {
  // Parameters bind as REAL: cast, so that the division is an integer one.
  bucket: "(ts_ms / CAST(@bucketMs AS INTEGER)) * CAST(@bucketMs AS INTEGER)",
  model: "model",
  provider: "provider",
  project: "project",
  session: "session_id",
  agent: "agent",
  tool: "tool_name",
  // The Cline client (cli, vscode, ...) its adapter recorded ('': the adapter did not say).
  client: "client",
};

/** The events (by message time, `ts_ms`) a query covers: [fromMs, toMs), and the bucket width. */
export interface ReportWindow {
  readonly fromMs: number;
  readonly toMs: number;
  /** Width of `bucket` in ms (ignored when `bucket` is not grouped by). */
  readonly bucketMs: number;
}

/** Everything in the ledger. */
export const WHOLE_LEDGER: ReportWindow = {
  fromMs: Number.MIN_SAFE_INTEGER,
  toMs: Number.MAX_SAFE_INTEGER,
  bucketMs: 1,
};

export type GroupKind = "events" | "calls" | "events-without-calls" | "edits" | "activity";

function groupSql(kind: GroupKind, dims: readonly LedgerDim[], packed: boolean): string {
  const cols = dims.map((d) => `${DIM_SQL[d]} AS "${d}"`);
  const group = dims.length > 0 ? `GROUP BY ${dims.map((_, i) => i + 1).join(", ")}` : "";
  const order = dims.length > 0 ? `ORDER BY ${dims.map((_, i) => i + 1).join(", ")}` : "";
  const sel = (xs: string[]) => [...cols, ...xs].join(", ");
  if (kind === "events-without-calls" && dims.includes("tool")) {
    throw new Error("events without calls have no tool dimension");
  }
  const range = "ts_ms >= @fromMs AND ts_ms < @toMs";
  if (kind === "activity") {
    // Active time (s, by type), commits and pull requests (docs/report.md); no tool dimension.
    return `SELECT ${sel([
      "IFNULL(SUM(CASE WHEN kind = 'active_time' AND detail = 'user' THEN amount ELSE 0 END), 0) / 1000.0 AS activeUserSeconds",
      "IFNULL(SUM(CASE WHEN kind = 'active_time' AND detail = 'agent' THEN amount ELSE 0 END), 0) / 1000.0 AS activeAgentSeconds",
      "IFNULL(SUM(kind = 'commit'), 0) AS commits",
      "IFNULL(SUM(kind = 'pull_request'), 0) AS pullRequests",
    ])} FROM activity WHERE kind IN ('active_time', 'commit', 'pull_request') AND ${range} ${group} ${order}`;
  }
  if (kind === "edits" && packed && dims.every((d) => PACK_DIMS.has(d))) return packedEditsSql(dims);
  if (kind === "edits") {
    // Lines of the accepted edits (what was delivered); decisions counted apart (docs/report.md).
    return `SELECT ${sel([
      "IFNULL(SUM(CASE decision WHEN 'accepted' THEN lines_added ELSE 0 END), 0) AS linesAdded",
      "IFNULL(SUM(CASE decision WHEN 'accepted' THEN lines_removed ELSE 0 END), 0) AS linesRemoved",
      "IFNULL(SUM(decision = 'accepted'), 0) AS editsAccepted",
      "IFNULL(SUM(decision = 'rejected'), 0) AS editsRejected",
      "IFNULL(SUM(decision = 'failed'), 0) AS editsFailed",
    ])} FROM edits WHERE ${range}${packed ? packsMeeting([["fromMs", "toMs"]]) : ""} ${group} ${order}`;
  }
  if (kind !== "calls") {
    const where = kind === "events-without-calls" ? `WHERE tool_calls = 0 AND ${range}` : `WHERE ${range}`;
    return `SELECT ${sel([
      "IFNULL(SUM(input), 0) AS input",
      "IFNULL(SUM(output), 0) AS output",
      "IFNULL(SUM(cache_read), 0) AS cacheRead",
      "IFNULL(SUM(cache_write), 0) AS cacheWrite",
      "COUNT(*) AS events",
    ])} FROM events ${where} ${group} ${order}`;
  }
  return `SELECT ${sel([
    "IFNULL(SUM(share_input), 0) AS input",
    "IFNULL(SUM(share_output), 0) AS output",
    "IFNULL(SUM(share_cache_read), 0) AS cacheRead",
    "IFNULL(SUM(share_cache_write), 0) AS cacheWrite",
    "COUNT(DISTINCT NULLIF(usage_key, '')) AS events",
    "COUNT(*) AS toolCalls",
  ])} FROM tool_calls WHERE ${range} ${group} ${order}`;
}

/** An edit row's (or the view's) contributions to the report's edit columns, as a, r, ea, er, ef. */
const EDIT_VALUES = [
  "CASE decision WHEN 'accepted' THEN lines_added ELSE 0 END",
  "CASE decision WHEN 'accepted' THEN lines_removed ELSE 0 END",
  "decision = 'accepted'",
  "decision = 'rejected'",
  "decision = 'failed'",
];
/** The report's edit columns, summed over a, r, ea, er, ef (EDIT_VALUES, or a pack's or the rollup's). */
const EDIT_TOTALS = [
  "IFNULL(SUM(a), 0) AS linesAdded",
  "IFNULL(SUM(r), 0) AS linesRemoved",
  "IFNULL(SUM(ea), 0) AS editsAccepted",
  "IFNULL(SUM(er), 0) AS editsRejected",
  "IFNULL(SUM(ef), 0) AS editsFailed",
];

/** The dimensions an edit pack has as columns (tables/edit-packs-v6.ts: one session, agent, tool, project, client). */
const PACK_DIMS: ReadonlySet<LedgerDim> = new Set(["session", "agent", "tool", "project", "client"]);

/**
 * groupSql's edits totals when every dimension is a pack's column: the sums each pack keeps for
 * the packs inside the window, and the edits of the packs that straddle its ends, so a view by
 * session reads a row per pack, not one per edit.
 */
function packedEditsSql(dims: readonly LedgerDim[]): string {
  const cols = dims.map((d) => `${DIM_SQL[d]} AS "${d}"`);
  const group = dims.length > 0 ? `GROUP BY ${dims.map((_, i) => i + 1).join(", ")}` : "";
  const order = dims.length > 0 ? `ORDER BY ${dims.map((_, i) => i + 1).join(", ")}` : "";
  const inside = "ts_min >= @fromMs AND ts_max < @toMs";
  return `SELECT ${[...dims.map((d) => `"${d}"`), ...EDIT_TOTALS].join(", ")} FROM (
    SELECT ${[...cols, "accepted_added AS a", "accepted_removed AS r", "accepted AS ea", "rejected AS er", "failed AS ef"].join(", ")}
      FROM edit_packs WHERE ${inside}
    UNION ALL
    SELECT ${[...cols, ...EDIT_VALUES].join(", ")}
      FROM edits WHERE ts_ms >= @fromMs AND ts_ms < @toMs
        AND id IN (SELECT id FROM edit_packs WHERE ts_min < @toMs AND ts_max >= @fromMs AND NOT (${inside}))
  ) ${group} ${order}`;
}

/** A dimension's column in report_rollup (bucket: of its 15-minute bucket). */
function rollupDimSql(d: LedgerDim): string {
  return d === "bucket" ? DIM_SQL.bucket.replace("ts_ms", "bucket_ms") : DIM_SQL[d];
}

/**
 * The same totals as groupSql, from report_rollup for the window's whole 15-minute buckets
 * [@lo, @hi) and from the rows for its two partial edges [@fromMs, @lo) and [@hi, @toMs). A calls
 * grouping carries its count only (`toolCalls`): its tokens and distinct paying messages are
 * per tool, which the rollup does not key.
 */
function rollupSql(kind: GroupKind, dims: readonly LedgerDim[]): string {
  const named = (sql: (d: LedgerDim) => string) => dims.map((d) => `${sql(d)} AS "${d}"`);
  const outer = dims.map((d) => `"${d}"`);
  const group = dims.length > 0 ? `GROUP BY ${dims.map((_, i) => i + 1).join(", ")}` : "";
  const order = dims.length > 0 ? `ORDER BY ${dims.map((_, i) => i + 1).join(", ")}` : "";
  const edges = "((ts_ms >= @fromMs AND ts_ms < @lo) OR (ts_ms >= @hi AND ts_ms < @toMs))";
  const whole = "bucket_ms >= @lo AND bucket_ms < @hi";
  if (kind === "calls") {
    return `SELECT ${[...outer, "IFNULL(SUM(n), 0) AS toolCalls"].join(", ")} FROM (
      SELECT ${[...named(rollupDimSql), "tool_calls AS n"].join(", ")} FROM report_rollup
        WHERE ${whole} AND no_calls = 0 AND tool_calls > 0
      UNION ALL
      SELECT ${[...named((d) => DIM_SQL[d]), "1 AS n"].join(", ")} FROM tool_calls WHERE ${edges}
    ) ${group} ${order}`;
  }
  const noCalls = kind === "events-without-calls";
  const sums = ["input", "output", "cache_read", "cache_write"];
  return `SELECT ${[
    ...outer,
    "IFNULL(SUM(input), 0) AS input",
    "IFNULL(SUM(output), 0) AS output",
    "IFNULL(SUM(cache_read), 0) AS cacheRead",
    "IFNULL(SUM(cache_write), 0) AS cacheWrite",
    "IFNULL(SUM(n), 0) AS events",
  ].join(", ")} FROM (
    SELECT ${[...named(rollupDimSql), ...sums, "events AS n"].join(", ")} FROM report_rollup
      WHERE ${whole} AND events > 0${noCalls ? " AND no_calls = 1" : ""}
    UNION ALL
    SELECT ${[...named((d) => DIM_SQL[d]), ...sums, "1 AS n"].join(", ")} FROM events
      WHERE ${edges}${noCalls ? " AND tool_calls = 0" : ""}
  ) ${group} ${order}`;
}

/**
 * groupSql's edits and activity totals from report_rollup's delivered columns for the whole buckets,
 * and from the rows for the two partial edges, as rollupSql does for events.
 */
function deliveredRollupSql(kind: "edits" | "activity", dims: readonly LedgerDim[], packed: boolean): string {
  const named = (sql: (d: LedgerDim) => string) => dims.map((d) => `${sql(d)} AS "${d}"`);
  const outer = dims.map((d) => `"${d}"`);
  const group = dims.length > 0 ? `GROUP BY ${dims.map((_, i) => i + 1).join(", ")}` : "";
  const order = dims.length > 0 ? `ORDER BY ${dims.map((_, i) => i + 1).join(", ")}` : "";
  const edges = "((ts_ms >= @fromMs AND ts_ms < @lo) OR (ts_ms >= @hi AND ts_ms < @toMs))";
  const whole = "bucket_ms >= @lo AND bucket_ms < @hi";
  const rows = (cols: string[]) => [...named((d) => DIM_SQL[d]), ...cols].join(", ");
  const rolled = (cols: string[]) => [...named(rollupDimSql), ...cols].join(", ");
  if (kind === "edits") {
    return `SELECT ${[...outer, ...EDIT_TOTALS].join(", ")} FROM (
      SELECT ${rolled([
        "lines_added AS a",
        "lines_removed AS r",
        "edits_accepted AS ea",
        "edits_rejected AS er",
        "edits_failed AS ef",
      ])} FROM report_rollup WHERE ${whole} AND edits_accepted + edits_rejected + edits_failed > 0
      UNION ALL
      SELECT ${rows([...EDIT_VALUES])} FROM edits WHERE ${edges}${
        packed
          ? packsMeeting([
              ["fromMs", "lo"],
              ["hi", "toMs"],
            ])
          : ""
      }
    ) ${group} ${order}`;
  }
  return `SELECT ${[
    ...outer,
    "IFNULL(SUM(u), 0) / 1000.0 AS activeUserSeconds",
    "IFNULL(SUM(g), 0) / 1000.0 AS activeAgentSeconds",
    "IFNULL(SUM(c), 0) AS commits",
    "IFNULL(SUM(p), 0) AS pullRequests",
  ].join(", ")} FROM (
    SELECT ${rolled(["active_user_ms AS u", "active_agent_ms AS g", "commits AS c", "pull_requests AS p"])}
      FROM report_rollup WHERE ${whole} AND activity > 0
    UNION ALL
    SELECT ${rows([
      "CASE WHEN kind = 'active_time' AND detail = 'user' THEN amount ELSE 0 END",
      "CASE WHEN kind = 'active_time' AND detail = 'agent' THEN amount ELSE 0 END",
      "kind = 'commit'",
      "kind = 'pull_request'",
    ])} FROM activity WHERE kind IN ('active_time', 'commit', 'pull_request') AND ${edges}
  ) ${group} ${order}`;
}

/**
 * The window's whole rollup buckets [lo, hi) (multiples of the bucket, lo >= 0: the rollup holds
 * no negative time); a window inside one bucket has none (lo = hi = fromMs: all of it is edge).
 */
export function rollupSpan(fromMs: number, toMs: number): { lo: number; hi: number } {
  const lo = Math.max(0, Math.ceil(fromMs / ROLLUP_BUCKET_MS) * ROLLUP_BUCKET_MS);
  const hi = Math.floor(toMs / ROLLUP_BUCKET_MS) * ROLLUP_BUCKET_MS;
  return hi < lo ? { lo: fromMs, hi: fromMs } : { lo, hi };
}

/**
 * The grouped totals `report` prints, over the ledger's events and tool calls in a time window.
 * Reached as `ledger.report`; each (kind, dimensions) statement is prepared once and kept, the
 * window is bound as named parameters.
 */
export class ReportQueries {
  private readonly cache = new Map<string, Database.Statement>();

  /**
   * `hasRollup`: the ledger is at ROLLUP_VERSION or later (a read-only view of an older one is not);
   * `hasDeliveredRollup`: at DELIVERED_ROLLUP_VERSION or later; `packedEdits`: at EDIT_PACKS_VERSION.
   */
  constructor(
    private readonly db: Database.Database,
    private readonly hasRollup = true,
    private readonly hasDeliveredRollup = hasRollup,
    private readonly packedEdits = hasDeliveredRollup,
  ) {}

  /** File edits grouped by `dims`: accepted lines added and removed, and edits by decision. */
  groupedEdits(dims: readonly LedgerDim[], window: ReportWindow = WHOLE_LEDGER): Record<string, unknown>[] {
    return this.grouped("edits", dims, window);
  }

  /** Totals of usage events, grouped by `dims`. */
  groupedEvents(dims: readonly LedgerDim[], window: ReportWindow = WHOLE_LEDGER): Record<string, unknown>[] {
    return this.grouped("events", dims, window);
  }

  /** Totals of tool calls (each carrying its 1/n share of its message's tokens), grouped by `dims`. */
  groupedCalls(dims: readonly LedgerDim[], window: ReportWindow = WHOLE_LEDGER): Record<string, unknown>[] {
    return this.grouped("calls", dims, window);
  }

  /** Events of messages that made no tool call: the `(none)` row of a per-tool view. */
  groupedEventsWithoutCalls(
    dims: readonly LedgerDim[],
    window: ReportWindow = WHOLE_LEDGER,
  ): Record<string, unknown>[] {
    return this.grouped("events-without-calls", dims, window);
  }

  grouped(kind: GroupKind, dims: readonly LedgerDim[], window: ReportWindow): Record<string, unknown>[] {
    // The edits table came with v3, as the rollup did: a read-only view of an older ledger has none.
    if (kind === "edits" && !this.hasRollup) return [];
    // Activity came with v3 too, and has no tool: a per-tool view shows it in the totals only.
    if (kind === "activity" && (!this.hasRollup || dims.includes("tool"))) return [];
    return this.statement(`${kind}:${dims.join(",")}`, () => groupSql(kind, dims, this.packedEdits)).all(
      paramsOf(dims, window),
    ) as Record<string, unknown>[];
  }

  /**
   * What `report` reads: the same rows as `grouped`, from the rollup where it can answer (no
   * session or tool dimension, buckets of whole quarter hours), so a report costs what its rows
   * cost, not what the history holds; else `grouped` itself. A calls grouping from the rollup
   * has `toolCalls` only (with a tool dimension, it is `grouped`, every column).
   */
  summed(kind: GroupKind, dims: readonly LedgerDim[], window: ReportWindow): Record<string, unknown>[] {
    const bucketMs = Math.max(1, Math.trunc(window.bucketMs));
    const delivered = kind === "edits" || kind === "activity";
    if (
      !this.hasRollup ||
      (delivered && !this.hasDeliveredRollup) ||
      dims.includes("session") ||
      dims.includes("tool") ||
      (dims.includes("bucket") && bucketMs % ROLLUP_BUCKET_MS !== 0)
    )
      return this.grouped(kind, dims, window);
    const stmt = this.statement(`rollup:${kind}:${dims.join(",")}`, () =>
      delivered ? deliveredRollupSql(kind, dims, this.packedEdits) : rollupSql(kind, dims),
    );
    return stmt.all({ ...paramsOf(dims, window), ...rollupSpan(window.fromMs, window.toMs) }) as Record<
      string,
      unknown
    >[];
  }

  private statement(key: string, sql: () => string): Database.Statement {
    let stmt = this.cache.get(key);
    if (stmt === undefined) {
      stmt = this.db.prepare(sql());
      this.cache.set(key, stmt);
    }
    return stmt;
  }
}
