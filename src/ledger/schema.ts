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
];

export const SCHEMA_VERSION = MIGRATIONS.length;
