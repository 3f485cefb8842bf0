/**
 * The ledger schema, versioned with PRAGMA user_version. Each entry migrates from
 * version i to i+1; a ledger newer than this build is refused, never downgraded.
 */
export const MIGRATIONS: readonly string[] = [
  // v1
  `
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;

  -- One row per usage event; id is the ingestion order (the delta exporter's watermark).
  CREATE TABLE events (
    id           INTEGER PRIMARY KEY,
    dedup_key    TEXT NOT NULL UNIQUE,
    adapter      TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    agent        TEXT NOT NULL,
    message_id   TEXT NOT NULL,
    ts_ms        INTEGER NOT NULL,
    model        TEXT NOT NULL,
    provider     TEXT NOT NULL,
    project      TEXT NOT NULL,
    input        INTEGER NOT NULL CHECK (input >= 0),
    output       INTEGER NOT NULL CHECK (output >= 0),
    cache_read   INTEGER NOT NULL CHECK (cache_read >= 0),
    cache_write  INTEGER NOT NULL CHECK (cache_write >= 0),
    total        INTEGER NOT NULL CHECK (total = input + output + cache_read + cache_write),
    cache_branch TEXT NOT NULL CHECK (cache_branch IN ('subset', 'additive')),
    recorded_cost REAL,
    tool_calls   INTEGER NOT NULL,
    source_path  TEXT NOT NULL,
    ingested_ms  INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX events_ts ON events (ts_ms);

  -- One row per tool_use block; shares are its 1/divisor part of the paying event.
  CREATE TABLE tool_calls (
    id           INTEGER PRIMARY KEY,
    call_key     TEXT NOT NULL UNIQUE,
    usage_key    TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    agent        TEXT NOT NULL,
    tool_name    TEXT NOT NULL,
    ts_ms        INTEGER NOT NULL,
    divisor      INTEGER NOT NULL CHECK (divisor >= 1),
    model        TEXT NOT NULL,
    provider     TEXT NOT NULL,
    project      TEXT NOT NULL,
    share_input  REAL NOT NULL,
    share_output REAL NOT NULL,
    share_cache_read  REAL NOT NULL,
    share_cache_write REAL NOT NULL,
    source_path  TEXT NOT NULL,
    ingested_ms  INTEGER NOT NULL
  ) STRICT;

  -- Running totals per exported series, maintained in the same transaction as the
  -- rows they sum, so an export never has to scan the event history.
  CREATE TABLE usage_series (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL,
    agent       TEXT NOT NULL,
    project     TEXT NOT NULL,
    model       TEXT NOT NULL,
    provider    TEXT NOT NULL,
    input       INTEGER NOT NULL DEFAULT 0,
    output      INTEGER NOT NULL DEFAULT 0,
    cache_read  INTEGER NOT NULL DEFAULT 0,
    cache_write INTEGER NOT NULL DEFAULT 0,
    events      INTEGER NOT NULL DEFAULT 0,
    first_ms    INTEGER NOT NULL,
    updated_ms  INTEGER NOT NULL,
    UNIQUE (session_id, agent, project, model, provider)
  ) STRICT;

  CREATE TABLE tool_series (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL,
    agent       TEXT NOT NULL,
    project     TEXT NOT NULL,
    model       TEXT NOT NULL,
    provider    TEXT NOT NULL,
    tool_name   TEXT NOT NULL,
    usage_known INTEGER NOT NULL,
    calls       INTEGER NOT NULL DEFAULT 0,
    input       REAL NOT NULL DEFAULT 0,
    output      REAL NOT NULL DEFAULT 0,
    cache_read  REAL NOT NULL DEFAULT 0,
    cache_write REAL NOT NULL DEFAULT 0,
    first_ms    INTEGER NOT NULL,
    updated_ms  INTEGER NOT NULL,
    UNIQUE (session_id, agent, project, model, provider, tool_name, usage_known)
  ) STRICT;

  -- fileconsumer vocabulary: one checkpoint per source (fingerprint = size, mtime, inode).
  CREATE TABLE checkpoints (
    path       TEXT PRIMARY KEY,
    adapter    TEXT NOT NULL,
    size       INTEGER NOT NULL,
    mtime_ns   TEXT NOT NULL,
    ino        INTEGER NOT NULL,
    dev        INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL
  ) STRICT;

  -- Per exporter: what a delta exporter has delivered, and when anything was last delivered.
  CREATE TABLE export_state (
    exporter        TEXT PRIMARY KEY,
    event_watermark INTEGER NOT NULL DEFAULT 0,
    call_watermark  INTEGER NOT NULL DEFAULT 0,
    window_start_ns TEXT NOT NULL,
    last_success_ms INTEGER NOT NULL DEFAULT 0
  ) STRICT;
  `,
  // v2: provider-request captures (Cline's CLINE_CAPTURE_PROVIDER_REQUEST files)
  `
  -- One row per capture file; id is the ingestion order (a delta exporter's watermark).
  CREATE TABLE captures (
    id               INTEGER PRIMARY KEY,
    capture_key      TEXT NOT NULL UNIQUE,
    adapter          TEXT NOT NULL,
    capture_id       TEXT NOT NULL,
    stage            TEXT NOT NULL,
    seq              INTEGER NOT NULL CHECK (seq >= 1),
    attempt          INTEGER NOT NULL CHECK (attempt >= 1),
    mode             TEXT NOT NULL,
    session_id       TEXT NOT NULL,
    agent            TEXT NOT NULL,
    agent_id         TEXT NOT NULL,
    conversation_id  TEXT NOT NULL,
    run_id           TEXT NOT NULL,
    iteration        INTEGER,
    project          TEXT NOT NULL,
    model            TEXT NOT NULL,
    provider         TEXT NOT NULL,
    ts_ms            INTEGER NOT NULL,
    payload_bytes    INTEGER NOT NULL CHECK (payload_bytes >= 0),
    estimated_tokens INTEGER NOT NULL CHECK (estimated_tokens >= 0),
    message_count    INTEGER NOT NULL CHECK (message_count >= 0),
    message_bytes    INTEGER NOT NULL CHECK (message_bytes >= 0),
    message_tokens   INTEGER NOT NULL CHECK (message_tokens >= 0),
    role_system      INTEGER NOT NULL CHECK (role_system >= 0),
    role_user        INTEGER NOT NULL CHECK (role_user >= 0),
    role_assistant   INTEGER NOT NULL CHECK (role_assistant >= 0),
    role_tool        INTEGER NOT NULL CHECK (role_tool >= 0),
    role_other       INTEGER NOT NULL CHECK (role_other >= 0),
    tool_results     INTEGER NOT NULL CHECK (tool_results >= 0),
    reasoning_blocks INTEGER NOT NULL CHECK (reasoning_blocks >= 0),
    -- Histogram bucket of payload_bytes / estimated_tokens (CAPTURE_*_BOUNDARIES below).
    payload_bucket   INTEGER NOT NULL,
    tokens_bucket    INTEGER NOT NULL,
    source_path      TEXT NOT NULL,
    ingested_ms      INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX captures_by_session ON captures (session_id, agent_id, run_id, iteration);

  -- Running totals per exported capture series, maintained in the same transaction as the rows.
  CREATE TABLE capture_series (
    id               INTEGER PRIMARY KEY,
    session_id       TEXT NOT NULL,
    agent            TEXT NOT NULL,
    project          TEXT NOT NULL,
    model            TEXT NOT NULL,
    provider         TEXT NOT NULL,
    stage            TEXT NOT NULL,
    captures         INTEGER NOT NULL DEFAULT 0,
    retries          INTEGER NOT NULL DEFAULT 0,
    payload_bytes    INTEGER NOT NULL DEFAULT 0,
    payload_min      INTEGER NOT NULL,
    payload_max      INTEGER NOT NULL,
    estimated_tokens INTEGER NOT NULL DEFAULT 0,
    tokens_min       INTEGER NOT NULL,
    tokens_max       INTEGER NOT NULL,
    messages         INTEGER NOT NULL DEFAULT 0,
    role_system      INTEGER NOT NULL DEFAULT 0,
    role_user        INTEGER NOT NULL DEFAULT 0,
    role_assistant   INTEGER NOT NULL DEFAULT 0,
    role_tool        INTEGER NOT NULL DEFAULT 0,
    role_other       INTEGER NOT NULL DEFAULT 0,
    tool_results     INTEGER NOT NULL DEFAULT 0,
    reasoning_blocks INTEGER NOT NULL DEFAULT 0,
    first_ms         INTEGER NOT NULL,
    updated_ms       INTEGER NOT NULL,
    UNIQUE (session_id, agent, project, model, provider, stage)
  ) STRICT;

  -- Histogram bucket counts of each capture series (metric: payload | tokens).
  CREATE TABLE capture_buckets (
    series_id INTEGER NOT NULL REFERENCES capture_series (id),
    metric    TEXT NOT NULL CHECK (metric IN ('payload', 'tokens')),
    bucket    INTEGER NOT NULL CHECK (bucket >= 0),
    count     INTEGER NOT NULL,
    PRIMARY KEY (series_id, metric, bucket)
  ) STRICT, WITHOUT ROWID;

  ALTER TABLE export_state ADD COLUMN capture_watermark INTEGER NOT NULL DEFAULT 0;
  `,
  // v3: the newest EVENT time of each series (ts_ms of the rows it sums), so the series TTL
  // judges by when things happened, not by when they were read (a backfill is all "new").
  `
  ALTER TABLE usage_series ADD COLUMN last_event_ms INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE tool_series ADD COLUMN last_event_ms INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE capture_series ADD COLUMN last_event_ms INTEGER NOT NULL DEFAULT 0;

  -- Backfill from the rows each series sums, one grouped pass per table: nothing indexes the
  -- rows by series key, so a correlated MAX per series would scan the whole table per series.
  UPDATE usage_series SET last_event_ms = m.ts
  FROM (SELECT session_id, agent, project, model, provider, MAX(ts_ms) AS ts
        FROM events GROUP BY session_id, agent, project, model, provider) AS m
  WHERE m.session_id = usage_series.session_id AND m.agent = usage_series.agent
    AND m.project = usage_series.project AND m.model = usage_series.model
    AND m.provider = usage_series.provider;

  UPDATE tool_series SET last_event_ms = m.ts
  FROM (SELECT session_id, agent, project, model, provider, tool_name, usage_key != '' AS known,
          MAX(ts_ms) AS ts
        FROM tool_calls GROUP BY session_id, agent, project, model, provider, tool_name, usage_key != '') AS m
  WHERE m.session_id = tool_series.session_id AND m.agent = tool_series.agent
    AND m.project = tool_series.project AND m.model = tool_series.model
    AND m.provider = tool_series.provider AND m.tool_name = tool_series.tool_name
    AND m.known = tool_series.usage_known;

  UPDATE capture_series SET last_event_ms = m.ts
  FROM (SELECT session_id, agent, project, model, provider, stage, MAX(ts_ms) AS ts
        FROM captures GROUP BY session_id, agent, project, model, provider, stage) AS m
  WHERE m.session_id = capture_series.session_id AND m.agent = capture_series.agent
    AND m.project = capture_series.project AND m.model = capture_series.model
    AND m.provider = capture_series.provider AND m.stage = capture_series.stage;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Explicit histogram bounds (inclusive upper bounds, OpenTelemetry semantics) of the capture
 * metrics. They are persisted as bucket indexes in `captures` and `capture_buckets`, so they
 * can change only together with a migration that re-buckets those rows.
 */
export const CAPTURE_PAYLOAD_BOUNDARIES: readonly number[] = Object.freeze([
  4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152, 4194304, 8388608,
]);
export const CAPTURE_TOKEN_BOUNDARIES: readonly number[] = Object.freeze([
  1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000, 512000, 1024000, 2048000,
]);

/** Index of the bucket holding `value`: the first bound >= value, or one past the last bound. */
export function bucketIndex(value: number, boundaries: readonly number[]): number {
  let lo = 0;
  let hi = boundaries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (value <= (boundaries[mid] as number)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
