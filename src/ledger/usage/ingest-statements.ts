/**
 * The statements of the write path (src/ledger/usage/ingest.ts), prepared once per ledger: the
 * rows of events and tool calls, the calls' upgrade and edit sums, and the usage and tool series upserts.
 */
import type Database from "better-sqlite3";
import { SERIES_KEY } from "./series.ts";

/**
 * The hot INSERTs (a row per request and per call: a backfill's most frequent statements) bind by
 * position, in these column orders: in better-sqlite3 each named parameter is a property lookup from
 * native code and each parameter object an allocation, which cost more than SQLite's insert of the
 * row itself (docs/performance.md, "The cold backfill's per-row cost"). Ingest's run() calls
 * (ingest.ts) list their values in the same order, one per line.
 */
const EVENT_COLUMNS = [
  "dedup_key",
  "adapter",
  "session_id",
  "agent",
  "message_id",
  "ts_ms",
  "model",
  "provider",
  "project",
  "input",
  "output",
  "cache_read",
  "cache_write",
  "total",
  "cache_branch",
  "recorded_cost",
  "tool_calls",
  "source_path",
  "ingested_ms",
  "signal_seq",
  "turn_key",
  "start_ms",
  "client",
  "end_known",
] as const;
const CALL_COLUMNS = [
  "call_key",
  "usage_key",
  "session_id",
  "agent",
  "tool_name",
  "ts_ms",
  "divisor",
  "model",
  "provider",
  "project",
  "share_input",
  "share_output",
  "share_cache_read",
  "share_cache_write",
  "source_path",
  "ingested_ms",
  "first_known",
  "client",
  // The sums and places of the call's edits this commit stores with it (NULL: none; schema v8).
  "edit_sums",
] as const;
/** A call's signal record columns (Signals.callRecord: all NULL while the call is open), after CALL_COLUMNS. */
const RECORD_COLUMNS = [
  "signal_seq",
  "end_ms",
  "outcome",
  "cancelled",
  "turn_key",
  "message_id",
  "tool_use_id",
] as const;

/** `INSERT INTO table (columns) VALUES (?, ...)`: positional, in the columns' order. */
function insertByPosition(table: string, columns: readonly string[]): string {
  return `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`;
}

/** The write path's statements (Ingest), prepared once per ledger. */
export function prepareIngest(db: Database.Database) {
  return {
    insertEvent: db.prepare(
      `${insertByPosition("events", EVENT_COLUMNS)} ON CONFLICT (dedup_key) DO NOTHING`,
    ),
    getEventComponents: db.prepare(
      "SELECT input, output, cache_read AS cacheRead, cache_write AS cacheWrite FROM events WHERE dedup_key = @key",
    ),
    insertCall: db.prepare(
      `${insertByPosition("tool_calls", CALL_COLUMNS)} ON CONFLICT (call_key) DO NOTHING`,
    ),
    // With its signal record columns.
    insertCallRecord: db.prepare(
      `${insertByPosition("tool_calls", [...CALL_COLUMNS, ...RECORD_COLUMNS])} ON CONFLICT (call_key) DO NOTHING`,
    ),
    upgradeCall: db.prepare(
      `UPDATE tool_calls SET usage_key = @usageKey, divisor = @divisor, share_input = @shareInput,
         share_output = @shareOutput, share_cache_read = @shareCacheRead, share_cache_write = @shareCacheWrite
       WHERE call_key = @callKey AND usage_key = ''
       RETURNING session_id AS sessionId, agent, project, model, provider, client, tool_name AS toolName,
         ts_ms AS tsMs`,
    ),
    // A call's stored edits (schema v8, delivered/call-edit-sums.ts): undefined when it has no row.
    callEditSums: db.prepare("SELECT edit_sums AS sums FROM tool_calls WHERE call_key = @callKey"),
    setCallEditSums: db.prepare("UPDATE tool_calls SET edit_sums = @sums WHERE call_key = @callKey"),
    // Both bound by position: the key's values (SeriesSum.key in ingest.ts), then sumColumns' (SeriesSum.values).
    usageSeries: db.prepare(
      `${insertByPosition("usage_series", [...SERIES_KEY.split(", "), ...sumColumns("events")])}
       ON CONFLICT (${SERIES_KEY}) DO UPDATE SET input = input + excluded.input, output = output + excluded.output,
         cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write,
         events = events + excluded.events, updated_ms = excluded.updated_ms,
         last_event_ms = max(last_event_ms, excluded.last_event_ms)`,
    ),
    toolSeries: db.prepare(
      `${insertByPosition("tool_series", [...SERIES_KEY.split(", "), "tool_name", "usage_known", ...sumColumns("calls")])}
       ON CONFLICT (${SERIES_KEY}, tool_name, usage_known) DO UPDATE SET calls = calls + excluded.calls,
         input = input + excluded.input, output = output + excluded.output,
         cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write,
         updated_ms = excluded.updated_ms, last_event_ms = max(last_event_ms, excluded.last_event_ms)`,
    ),
  };
}

/** A series upsert's columns after its key, in SeriesSum.values order (`count`: events or calls). */
function sumColumns(count: string): string[] {
  return ["input", "output", "cache_read", "cache_write", count, "first_ms", "updated_ms", "last_event_ms"];
}
