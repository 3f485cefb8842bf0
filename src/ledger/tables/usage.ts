/**
 * Usage: one row per assistant message with metrics (events) and per tool_use block
 * (tool_calls), and the running totals per exported series, kept in the same transaction as the
 * rows they sum so an export never scans the history. Each row's id is its ingestion order (a
 * delta exporter's watermark); signal_seq is its place in the signal delivery order.
 */
export const USAGE_TABLES = `
  CREATE TABLE events (
    id            INTEGER PRIMARY KEY,
    dedup_key     TEXT NOT NULL UNIQUE,
    adapter       TEXT NOT NULL,
    session_id    TEXT NOT NULL,
    agent         TEXT NOT NULL,
    message_id    TEXT NOT NULL,
    ts_ms         INTEGER NOT NULL,
    model         TEXT NOT NULL,
    provider      TEXT NOT NULL,
    project       TEXT NOT NULL,
    input         INTEGER NOT NULL CHECK (input >= 0),
    output        INTEGER NOT NULL CHECK (output >= 0),
    cache_read    INTEGER NOT NULL CHECK (cache_read >= 0),
    cache_write   INTEGER NOT NULL CHECK (cache_write >= 0),
    total         INTEGER NOT NULL CHECK (total = input + output + cache_read + cache_write),
    cache_branch  TEXT NOT NULL CHECK (cache_branch IN ('subset', 'additive')),
    recorded_cost REAL,
    tool_calls    INTEGER NOT NULL,
    source_path   TEXT NOT NULL,
    ingested_ms   INTEGER NOT NULL,
    -- The request's signal record: its place in the delivery order (NULL: none), turn and start.
    signal_seq    INTEGER,
    turn_key      TEXT,
    start_ms      INTEGER,
    -- Which Cline client wrote it (cline.client: cli, vscode, ...), as its adapter says ('': it
    -- does not); end_known 0: its source records only when it started (the task format), so its
    -- end is its start, marked approximate (cline.end.known=false), never invented.
    client        TEXT NOT NULL DEFAULT '',
    end_known     INTEGER NOT NULL DEFAULT 1 CHECK (end_known IN (0, 1))
  ) STRICT;
  CREATE INDEX events_ts ON events (ts_ms);
  CREATE INDEX events_signal_seq ON events (signal_seq) WHERE signal_seq IS NOT NULL;

  -- A call's shares are its 1/divisor part of the paying event (usage_key: its dedup key, '' while
  -- unknown; first_known: whether it was known when the call was first stored).
  CREATE TABLE tool_calls (
    id                INTEGER PRIMARY KEY,
    call_key          TEXT NOT NULL UNIQUE,
    usage_key         TEXT NOT NULL,
    session_id        TEXT NOT NULL,
    agent             TEXT NOT NULL,
    tool_name         TEXT NOT NULL,
    ts_ms             INTEGER NOT NULL,
    divisor           INTEGER NOT NULL CHECK (divisor >= 1),
    model             TEXT NOT NULL,
    provider          TEXT NOT NULL,
    project           TEXT NOT NULL,
    share_input       REAL NOT NULL,
    share_output      REAL NOT NULL,
    share_cache_read  REAL NOT NULL,
    share_cache_write REAL NOT NULL,
    source_path       TEXT NOT NULL,
    ingested_ms       INTEGER NOT NULL,
    first_known       INTEGER NOT NULL DEFAULT 1 CHECK (first_known IN (0, 1)),
    -- The call's signal record once it is final (signal_seq NULL: not final yet).
    signal_seq        INTEGER,
    end_ms            INTEGER,
    outcome           TEXT CHECK (outcome IN ('success', 'failure', 'unknown')),
    cancelled         INTEGER CHECK (cancelled IN (0, 1)),
    -- NULL on a final call: its paying request's (events.turn_key, message_id: the same message).
    turn_key          TEXT,
    message_id        TEXT,
    tool_use_id       TEXT,
    -- Which Cline client wrote its message (as events.client).
    client            TEXT NOT NULL DEFAULT ''
  ) STRICT;
  -- The calls that were (or still are) waiting for their usage: read by the upgrade and its delta.
  CREATE INDEX tool_calls_awaiting_usage ON tool_calls (usage_key) WHERE first_known = 0;
  CREATE INDEX tool_calls_ts ON tool_calls (ts_ms);
  CREATE INDEX tool_calls_signal_seq ON tool_calls (signal_seq) WHERE signal_seq IS NOT NULL;

  -- last_event_ms: the newest event time summed (the series TTL judges by when things happened).
  CREATE TABLE usage_series (
    id            INTEGER PRIMARY KEY,
    session_id    TEXT NOT NULL,
    agent         TEXT NOT NULL,
    project       TEXT NOT NULL,
    model         TEXT NOT NULL,
    provider      TEXT NOT NULL,
    input         INTEGER NOT NULL DEFAULT 0,
    output        INTEGER NOT NULL DEFAULT 0,
    cache_read    INTEGER NOT NULL DEFAULT 0,
    cache_write   INTEGER NOT NULL DEFAULT 0,
    events        INTEGER NOT NULL DEFAULT 0,
    first_ms      INTEGER NOT NULL,
    updated_ms    INTEGER NOT NULL,
    last_event_ms INTEGER NOT NULL DEFAULT 0,
    UNIQUE (session_id, agent, project, model, provider)
  ) STRICT;

  CREATE TABLE tool_series (
    id            INTEGER PRIMARY KEY,
    session_id    TEXT NOT NULL,
    agent         TEXT NOT NULL,
    project       TEXT NOT NULL,
    model         TEXT NOT NULL,
    provider      TEXT NOT NULL,
    tool_name     TEXT NOT NULL,
    usage_known   INTEGER NOT NULL,
    calls         INTEGER NOT NULL DEFAULT 0,
    input         REAL NOT NULL DEFAULT 0,
    output        REAL NOT NULL DEFAULT 0,
    cache_read    REAL NOT NULL DEFAULT 0,
    cache_write   REAL NOT NULL DEFAULT 0,
    first_ms      INTEGER NOT NULL,
    updated_ms    INTEGER NOT NULL,
    last_event_ms INTEGER NOT NULL DEFAULT 0,
    UNIQUE (session_id, agent, project, model, provider, tool_name, usage_known)
  ) STRICT;

  -- cline.tool.calls by outcome, counted once a call is final (src/ledger/signals/tool-outcomes.ts): totals
  -- over the final calls up to tool_outcome_state.counted_seq (its one row).
  CREATE TABLE tool_outcome_series (
    id            INTEGER PRIMARY KEY,
    session_id    TEXT NOT NULL,
    agent         TEXT NOT NULL,
    project       TEXT NOT NULL,
    model         TEXT NOT NULL,
    provider      TEXT NOT NULL,
    tool_name     TEXT NOT NULL,
    -- tool_calls.first_known: whether the paying response's usage was known when the call was first read.
    usage_known   INTEGER NOT NULL CHECK (usage_known IN (0, 1)),
    outcome       TEXT NOT NULL CHECK (outcome IN ('success', 'failure', 'unknown')),
    calls         INTEGER NOT NULL,
    first_ms      INTEGER NOT NULL,
    updated_ms    INTEGER NOT NULL,
    last_event_ms INTEGER NOT NULL,
    UNIQUE (session_id, agent, project, model, provider, tool_name, usage_known, outcome)
  ) STRICT;
  CREATE TABLE tool_outcome_state (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    counted_seq INTEGER NOT NULL
  ) STRICT;
  INSERT INTO tool_outcome_state (id, counted_seq) VALUES (1, 0);
`;
