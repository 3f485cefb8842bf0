/**
 * What events and traces need beyond the counts (src/ledger/signals/signals.ts): each document's last
 * time, calls not yet final, results read before their call, turns, the final records that are
 * not a request or a call (turns, compactions) and each signal exporter's watermark. Requests'
 * and calls' records live on their events and tool_calls rows (usage.ts), in the same order.
 */
export const SIGNAL_TABLES = `
  CREATE TABLE signal_documents (
    source_path     TEXT PRIMARY KEY,
    root_session_id TEXT NOT NULL,
    session_id      TEXT NOT NULL,
    agent           TEXT NOT NULL,
    last_ts_ms      INTEGER NOT NULL
  ) STRICT, WITHOUT ROWID;

  -- A tool call seen WITHOUT its result (tool_calls.call_key): its ids and turn until it is final.
  CREATE TABLE signal_calls (
    call_key    TEXT PRIMARY KEY,
    message_id  TEXT NOT NULL,
    tool_use_id TEXT NOT NULL,
    turn_key    TEXT NOT NULL,
    source_path TEXT NOT NULL,
    final       INTEGER NOT NULL DEFAULT 0 CHECK (final IN (0, 1))
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX signal_calls_open ON signal_calls (source_path) WHERE final = 0;
  CREATE INDEX signal_calls_open_by_turn ON signal_calls (turn_key) WHERE final = 0;

  -- A tool_result block whose call was stored by an earlier read, joined by the call key. Never its content.
  CREATE TABLE signal_results (
    call_key   TEXT PRIMARY KEY,
    message_id TEXT NOT NULL,
    ts_ms      INTEGER NOT NULL,
    is_error   INTEGER CHECK (is_error IN (0, 1))
  ) STRICT, WITHOUT ROWID;

  -- Per user turn of an agent's document (the invoke_agent spans).
  CREATE TABLE signal_turns (
    turn_key        TEXT PRIMARY KEY,
    root_session_id TEXT NOT NULL,
    session_id      TEXT NOT NULL,
    agent           TEXT NOT NULL,
    turn_id         TEXT NOT NULL,
    project         TEXT NOT NULL,
    start_ms        INTEGER NOT NULL,
    end_ms          INTEGER NOT NULL,
    closed          INTEGER NOT NULL CHECK (closed IN (0, 1)),
    source_path     TEXT NOT NULL,
    final           INTEGER NOT NULL DEFAULT 0 CHECK (final IN (0, 1))
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX signal_turns_open ON signal_turns (source_path) WHERE final = 0;
  -- The turn a compaction was observed in, and the lead turn a sub-agent's turn nests under.
  CREATE INDEX signal_turns_by_session ON signal_turns (session_id, start_ms);

  -- Final records that are neither a request nor a call, in the one delivery order (seq), each
  -- queued by the statement that makes it new (no UNIQUE index: a text b-tree per record).
  CREATE TABLE signal_queue (
    seq         INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('chat', 'tool', 'turn', 'compaction')),
    ref_key     TEXT NOT NULL,
    ts_ms       INTEGER NOT NULL,
    end_ms      INTEGER NOT NULL,
    outcome     TEXT CHECK (outcome IN ('success', 'failure', 'unknown')),
    cancelled   INTEGER NOT NULL DEFAULT 0 CHECK (cancelled IN (0, 1)),
    start_ms    INTEGER NOT NULL,
    -- compaction: its turn ('' = none); turn: the lead turn it nests under.
    turn_key    TEXT NOT NULL,
    message_id  TEXT NOT NULL DEFAULT '',
    tool_use_id TEXT NOT NULL DEFAULT ''
  ) STRICT;

  -- Requests and calls stored before their signals were recorded, queued at their next read.
  -- Only a migration that adds signal records to existing rows fills it; the baseline leaves it empty.
  CREATE TABLE signal_unqueued (
    kind    TEXT NOT NULL CHECK (kind IN ('chat', 'tool')),
    ref_key TEXT NOT NULL,
    PRIMARY KEY (kind, ref_key)
  ) STRICT, WITHOUT ROWID;

  -- Per signal exporter: the last seq delivered, and the event time it starts from.
  CREATE TABLE signal_delivery (
    exporter        TEXT PRIMARY KEY,
    watermark       INTEGER NOT NULL,
    from_ms         INTEGER NOT NULL,
    last_success_ms INTEGER NOT NULL DEFAULT 0
  ) STRICT;
`;
