/**
 * Provider-request captures (Cline's CLINE_CAPTURE_PROVIDER_REQUEST files) and context
 * compactions: one row per observed file or compaction (id: the delta exporter's watermark),
 * and the capture series' running totals and histogram buckets.
 */
export const CAPTURE_TABLES = `
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
    -- Histogram bucket of payload_bytes / estimated_tokens (CAPTURE_*_BOUNDARIES, schema.ts).
    payload_bucket   INTEGER NOT NULL,
    tokens_bucket    INTEGER NOT NULL,
    source_path      TEXT NOT NULL,
    ingested_ms      INTEGER NOT NULL,
    -- Decided by the adapter (a compaction summarizer's attempts are summaries, not retries).
    retry            INTEGER NOT NULL DEFAULT 0 CHECK (retry IN (0, 1))
  ) STRICT;
  CREATE INDEX captures_by_session ON captures (session_id, agent_id, run_id, iteration);

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
    last_event_ms    INTEGER NOT NULL DEFAULT 0,
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

  -- One row per observed compaction (src/ledger/usage/compactions.ts); root_session_id: its trace.
  CREATE TABLE compactions (
    id                   INTEGER PRIMARY KEY,
    compaction_key       TEXT NOT NULL UNIQUE,
    adapter              TEXT NOT NULL,
    session_id           TEXT NOT NULL,
    agent                TEXT NOT NULL,
    project              TEXT NOT NULL,
    model                TEXT NOT NULL,
    provider             TEXT NOT NULL,
    strategy             TEXT NOT NULL,
    reason               TEXT NOT NULL,
    ts_ms                INTEGER NOT NULL,
    source_message_count INTEGER NOT NULL,
    messages_removed     INTEGER,
    tokens_before        INTEGER,
    source_path          TEXT NOT NULL,
    ingested_ms          INTEGER NOT NULL,
    root_session_id      TEXT NOT NULL DEFAULT ''
  ) STRICT;
`;
