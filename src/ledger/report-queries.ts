import type Database from "better-sqlite3";

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

function groupSql(kind: GroupKind, dims: readonly LedgerDim[]): string {
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
  if (kind === "edits") {
    // Lines of the accepted edits (what was delivered); decisions counted apart (docs/report.md).
    return `SELECT ${sel([
      "IFNULL(SUM(CASE decision WHEN 'accepted' THEN lines_added ELSE 0 END), 0) AS linesAdded",
      "IFNULL(SUM(CASE decision WHEN 'accepted' THEN lines_removed ELSE 0 END), 0) AS linesRemoved",
      "IFNULL(SUM(decision = 'accepted'), 0) AS editsAccepted",
      "IFNULL(SUM(decision = 'rejected'), 0) AS editsRejected",
      "IFNULL(SUM(decision = 'failed'), 0) AS editsFailed",
    ])} FROM edits WHERE ${range} ${group} ${order}`;
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

/**
 * The grouped totals `report` prints, over the ledger's events and tool calls in a time window.
 * Reached as `ledger.report`; each (kind, dimensions) statement is prepared once and kept, the
 * window is bound as named parameters.
 */
export class ReportQueries {
  private readonly cache = new Map<string, Database.Statement>();
  /** False on a read-only view of a ledger from before the edits (schema v3): no edit rows. */
  private readonly hasEdits: boolean;
  /** False on a read-only view of a ledger from before activity (schema v3): no activity rows. */
  private readonly hasActivity: boolean;

  constructor(private readonly db: Database.Database) {
    this.hasEdits =
      db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'edits'").get() !== undefined;
    this.hasActivity =
      db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'activity'").get() !==
      undefined;
  }

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
    if (kind === "edits" && !this.hasEdits) return [];
    // Activity has no tool: a per-tool view shows it in the totals only.
    if (kind === "activity" && (!this.hasActivity || dims.includes("tool"))) return [];
    const key = `${kind}:${dims.join(",")}`;
    let stmt = this.cache.get(key);
    if (stmt === undefined) {
      stmt = this.db.prepare(groupSql(kind, dims));
      this.cache.set(key, stmt);
    }
    const params: Record<string, number> = { fromMs: window.fromMs, toMs: window.toMs };
    if (dims.includes("bucket")) params.bucketMs = Math.max(1, Math.trunc(window.bucketMs));
    return stmt.all(params) as Record<string, unknown>[];
  }
}
