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
  // v4: a tool call first seen before its message's metrics is upgraded when they arrive. The
  // calls counter keeps counting it where it was first counted (usage unknown: a counter never
  // goes down); its tokens are added to the usage-known series when they become known.
  `
  -- 1 when the call's usage was known when first stored; its calls count belongs to that series.
  ALTER TABLE tool_calls ADD COLUMN first_known INTEGER NOT NULL DEFAULT 1 CHECK (first_known IN (0, 1));
  UPDATE tool_calls SET first_known = 0 WHERE usage_key = '';
  -- The calls that were (or still are) waiting for their usage: tiny, read by the upgrade and
  -- by the delta export of upgrades (joined to the events of a window by usage_key).
  CREATE INDEX tool_calls_awaiting_usage ON tool_calls (usage_key) WHERE first_known = 0;
  `,
  // v5: events, traces and GenAI metrics (src/ledger/signals.ts): request starts, call ids and
  // results, turns, document times, and the queue of final records each of those exporters
  // delivers with its own watermark.
  `
  CREATE TABLE signal_documents (
    source_path     TEXT PRIMARY KEY,
    root_session_id TEXT NOT NULL,
    session_id      TEXT NOT NULL,
    agent           TEXT NOT NULL,
    last_ts_ms      INTEGER NOT NULL
  ) STRICT, WITHOUT ROWID;

  -- A tool call seen WITHOUT its result (tool_calls.call_key): its ids and turn until it is final.
  -- A call read together with its result is final at once and only has its queue row.
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

  -- A tool_result block whose call was stored by an earlier read, joined by the call key (tool_use
  -- id). Never its content.
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
  CREATE INDEX signal_turns_lead ON signal_turns (root_session_id, start_ms) WHERE agent = 'lead';

  -- Final records in the order they became final; seq is every signal exporter's watermark.
  CREATE TABLE signal_queue (
    seq        INTEGER PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('chat', 'tool', 'turn')),
    ref_key    TEXT NOT NULL,
    ts_ms      INTEGER NOT NULL,
    end_ms     INTEGER NOT NULL,
    outcome    TEXT CHECK (outcome IN ('success', 'failure', 'unknown')),
    cancelled  INTEGER NOT NULL DEFAULT 0 CHECK (cancelled IN (0, 1)),
    -- chat: the latest ts before it in its document (0 = unknown); others: = ts_ms.
    start_ms   INTEGER NOT NULL,
    -- chat, tool: their turn; turn: the lead turn it nests under ('' = none).
    turn_key   TEXT NOT NULL,
    -- tool: the calling message and the tool_use id.
    message_id TEXT NOT NULL DEFAULT '',
    tool_use_id TEXT NOT NULL DEFAULT '',
    UNIQUE (kind, ref_key)
  ) STRICT;

  -- Per signal exporter: the last queue seq delivered, and the event time it starts from.
  CREATE TABLE signal_delivery (
    exporter        TEXT PRIMARY KEY,
    watermark       INTEGER NOT NULL,
    from_ms         INTEGER NOT NULL,
    last_success_ms INTEGER NOT NULL DEFAULT 0
  ) STRICT;

  -- The GenAI semantic-convention histograms (gen_ai.client.token.usage,
  -- gen_ai.client.operation.duration) and cline.tool.duration: running totals per series, kept in
  -- the same transaction as the rows they sum; buckets follow GENAI_*_BOUNDARIES (signals.ts).
  CREATE TABLE genai_series (
    id            INTEGER PRIMARY KEY,
    metric        TEXT NOT NULL CHECK (metric IN ('token_usage', 'operation_duration', 'tool_duration')),
    session_id    TEXT NOT NULL,
    model         TEXT NOT NULL,
    provider      TEXT NOT NULL,
    token_type    TEXT NOT NULL,
    tool_name     TEXT NOT NULL,
    outcome       TEXT NOT NULL,
    count         INTEGER NOT NULL,
    sum           REAL NOT NULL,
    min           REAL NOT NULL,
    max           REAL NOT NULL,
    first_ms      INTEGER NOT NULL,
    updated_ms    INTEGER NOT NULL,
    last_event_ms INTEGER NOT NULL,
    UNIQUE (metric, session_id, model, provider, token_type, tool_name, outcome)
  ) STRICT;
  CREATE TABLE genai_buckets (
    series_id INTEGER NOT NULL REFERENCES genai_series (id),
    bucket    INTEGER NOT NULL CHECK (bucket >= 0),
    count     INTEGER NOT NULL,
    PRIMARY KEY (series_id, bucket)
  ) STRICT, WITHOUT ROWID;

  -- The history already in the ledger was read without these fields: every messages document is
  -- read once more (its rows dedup on their keys; only the new tables fill).
  UPDATE checkpoints SET mtime_ns = 'reread-for-signals' WHERE adapter = 'cline';
  `,
  // Context compactions (src/ledger/compactions.ts, docs/metrics.md cline.compactions): one row
  // per observed compaction; and each capture's retry flag, decided by the adapter (a compaction
  // summarizer's attempts are successive summaries, not retries).
  `
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
    ingested_ms          INTEGER NOT NULL
  ) STRICT;

  -- Rows stored before this version keep what they were counted as (a counter never goes down).
  ALTER TABLE captures ADD COLUMN retry INTEGER NOT NULL DEFAULT 0 CHECK (retry IN (0, 1));
  UPDATE captures SET retry = attempt > 1;

  ALTER TABLE export_state ADD COLUMN compaction_watermark INTEGER NOT NULL DEFAULT 0;
  `,
  // The `cline.compaction` event and span (src/ledger/signals.ts recordCompaction): compactions
  // join the signal queue (its kind CHECK is widened by rebuilding the table, SQLite's documented
  // way; seq values are kept, so every exporter's watermark stays valid), with the root session
  // (the trace) stored per compaction, and the turn lookup indexed. Compactions recorded before
  // this version are queued once now, after everything already queued.
  `
  ALTER TABLE compactions ADD COLUMN root_session_id TEXT NOT NULL DEFAULT '';
  UPDATE compactions SET root_session_id = IFNULL(
    (SELECT d.root_session_id FROM signal_documents d WHERE d.session_id = compactions.session_id LIMIT 1),
    session_id);

  CREATE TABLE signal_queue_v7 (
    seq        INTEGER PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('chat', 'tool', 'turn', 'compaction')),
    ref_key    TEXT NOT NULL,
    ts_ms      INTEGER NOT NULL,
    end_ms     INTEGER NOT NULL,
    outcome    TEXT CHECK (outcome IN ('success', 'failure', 'unknown')),
    cancelled  INTEGER NOT NULL DEFAULT 0 CHECK (cancelled IN (0, 1)),
    start_ms   INTEGER NOT NULL,
    -- chat, tool, compaction: their turn ('' = none); turn: the lead turn it nests under.
    turn_key   TEXT NOT NULL,
    message_id TEXT NOT NULL DEFAULT '',
    tool_use_id TEXT NOT NULL DEFAULT '',
    UNIQUE (kind, ref_key)
  ) STRICT;
  INSERT INTO signal_queue_v7 SELECT seq, kind, ref_key, ts_ms, end_ms, outcome, cancelled, start_ms, turn_key,
    message_id, tool_use_id FROM signal_queue;
  DROP TABLE signal_queue;
  ALTER TABLE signal_queue_v7 RENAME TO signal_queue;

  -- The turn a compaction was observed in: the agent's latest turn started at or before it.
  CREATE INDEX signal_turns_by_session ON signal_turns (session_id, start_ms);

  INSERT INTO signal_queue (kind, ref_key, ts_ms, end_ms, start_ms, turn_key)
    SELECT 'compaction', c.compaction_key, c.ts_ms, c.ts_ms, c.ts_ms,
      IFNULL((SELECT t.turn_key FROM signal_turns t WHERE t.session_id = c.session_id AND t.agent = c.agent
        AND t.start_ms <= c.ts_ms ORDER BY t.start_ms DESC LIMIT 1), '')
    FROM compactions c ORDER BY c.id;
  `,
  // v8: ingest cost (docs/performance.md "signals ingest"): the lead turn a sub-agent's turn
  // nests under is found through signal_turns_by_session (a lead turn's session is its root
  // session), so the partial index that duplicated it is no longer written on every lead turn.
  // Nothing is re-queued or re-read: the queue and every watermark over it are untouched.
  `
  DROP INDEX IF EXISTS signal_turns_lead;
  `,
  // cline.tool.calls by cline.tool.outcome, counted once a call is FINAL (src/ledger/tool-outcomes.ts,
  // docs/metrics.md "Tool outcome"): running totals over the tool rows of signal_queue up to
  // tool_outcome_state.counted_seq, kept in the transaction that queues them, and each exporter's
  // delta watermark over those rows (export_state.final_call_watermark, the table rebuilt: SQLite
  // has no ADD COLUMN IF NOT EXISTS). Built from the whole queue, so it can run twice: the
  // cumulative series hold every call already final; a delta exporter starts at the end of the
  // queue (what it delivered before is not sent again); updated_ms = now: sent once, as new series.
  `
  CREATE TABLE IF NOT EXISTS tool_outcome_series (
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
  DELETE FROM tool_outcome_series;
  INSERT INTO tool_outcome_series (session_id, agent, project, model, provider, tool_name, usage_known, outcome,
      calls, first_ms, updated_ms, last_event_ms)
    SELECT c.session_id, c.agent, c.project, c.model, c.provider, c.tool_name, c.first_known,
      IFNULL(q.outcome, 'unknown'), COUNT(*), MIN(c.ingested_ms), CAST(unixepoch('subsec') * 1000 AS INTEGER),
      MAX(c.ts_ms)
    FROM signal_queue q JOIN tool_calls c ON c.call_key = q.ref_key
    WHERE q.kind = 'tool'
    GROUP BY c.session_id, c.agent, c.project, c.model, c.provider, c.tool_name, c.first_known, IFNULL(q.outcome, 'unknown')
    ORDER BY MIN(q.seq);
  CREATE TABLE IF NOT EXISTS tool_outcome_state (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    counted_seq INTEGER NOT NULL
  ) STRICT;
  INSERT INTO tool_outcome_state (id, counted_seq) VALUES (1, (SELECT IFNULL(MAX(seq), 0) FROM signal_queue))
    ON CONFLICT (id) DO UPDATE SET counted_seq = excluded.counted_seq;

  CREATE TABLE export_state_final (
    exporter             TEXT PRIMARY KEY,
    event_watermark      INTEGER NOT NULL DEFAULT 0,
    call_watermark       INTEGER NOT NULL DEFAULT 0,
    window_start_ns      TEXT NOT NULL,
    last_success_ms      INTEGER NOT NULL DEFAULT 0,
    capture_watermark    INTEGER NOT NULL DEFAULT 0,
    compaction_watermark INTEGER NOT NULL DEFAULT 0,
    -- Highest signal_queue seq whose final tool calls were delivered (delta).
    final_call_watermark INTEGER NOT NULL DEFAULT 0
  ) STRICT;
  INSERT INTO export_state_final SELECT exporter, event_watermark, call_watermark, window_start_ns, last_success_ms,
      capture_watermark, compaction_watermark, (SELECT IFNULL(MAX(seq), 0) FROM signal_queue)
    FROM export_state;
  DROP TABLE export_state;
  ALTER TABLE export_state_final RENAME TO export_state;
  `,
  // Persisted directory listings (src/ledger/listings.ts, src/adapter/listings.ts): what each of
  // the agent's directories held when last listed, with its mark, so an idle `report` stats a
  // session folder instead of listing it. A cache only: no event depends on it.
  `
  CREATE TABLE IF NOT EXISTS listings (
    scope    TEXT NOT NULL,
    path     TEXT NOT NULL,
    mark     TEXT NOT NULL,
    taken_ms INTEGER NOT NULL,
    entries  TEXT NOT NULL,
    PRIMARY KEY (scope, path)
  ) STRICT;
  `,
  // GenAI buckets inline (docs/performance.md "Signals ingest"): a GenAI histogram series and its
  // bucket counts are one genai_histograms row (bK = the count of bucket K, GENAI_BUCKET_COLUMNS in
  // src/ledger/genai.ts), so an observation batch is one upsert per series instead of one plus one
  // per bucket touched. The series keep their ids; the counts move exactly (summed per series and
  // bucket). Re-runnable: the old tables are recreated empty when a first run dropped them.
  `
  CREATE TABLE IF NOT EXISTS genai_series (
    id            INTEGER PRIMARY KEY,
    metric        TEXT NOT NULL,
    session_id    TEXT NOT NULL,
    model         TEXT NOT NULL,
    provider      TEXT NOT NULL,
    token_type    TEXT NOT NULL,
    tool_name     TEXT NOT NULL,
    outcome       TEXT NOT NULL,
    count         INTEGER NOT NULL,
    sum           REAL NOT NULL,
    min           REAL NOT NULL,
    max           REAL NOT NULL,
    first_ms      INTEGER NOT NULL,
    updated_ms    INTEGER NOT NULL,
    last_event_ms INTEGER NOT NULL
  ) STRICT;
  CREATE TABLE IF NOT EXISTS genai_buckets (
    series_id INTEGER NOT NULL,
    bucket    INTEGER NOT NULL,
    count     INTEGER NOT NULL,
    PRIMARY KEY (series_id, bucket)
  ) STRICT, WITHOUT ROWID;

  CREATE TABLE IF NOT EXISTS genai_histograms (
    id            INTEGER PRIMARY KEY,
    metric        TEXT NOT NULL CHECK (metric IN ('token_usage', 'operation_duration', 'tool_duration')),
    session_id    TEXT NOT NULL,
    model         TEXT NOT NULL,
    provider      TEXT NOT NULL,
    token_type    TEXT NOT NULL,
    tool_name     TEXT NOT NULL,
    outcome       TEXT NOT NULL,
    count         INTEGER NOT NULL,
    sum           REAL NOT NULL,
    min           REAL NOT NULL,
    max           REAL NOT NULL,
    first_ms      INTEGER NOT NULL,
    updated_ms    INTEGER NOT NULL,
    last_event_ms INTEGER NOT NULL,
    b0 INTEGER NOT NULL DEFAULT 0, b1 INTEGER NOT NULL DEFAULT 0, b2 INTEGER NOT NULL DEFAULT 0,
    b3 INTEGER NOT NULL DEFAULT 0, b4 INTEGER NOT NULL DEFAULT 0, b5 INTEGER NOT NULL DEFAULT 0,
    b6 INTEGER NOT NULL DEFAULT 0, b7 INTEGER NOT NULL DEFAULT 0, b8 INTEGER NOT NULL DEFAULT 0,
    b9 INTEGER NOT NULL DEFAULT 0, b10 INTEGER NOT NULL DEFAULT 0, b11 INTEGER NOT NULL DEFAULT 0,
    b12 INTEGER NOT NULL DEFAULT 0, b13 INTEGER NOT NULL DEFAULT 0, b14 INTEGER NOT NULL DEFAULT 0,
    b15 INTEGER NOT NULL DEFAULT 0, b16 INTEGER NOT NULL DEFAULT 0, b17 INTEGER NOT NULL DEFAULT 0,
    UNIQUE (metric, session_id, model, provider, token_type, tool_name, outcome)
  ) STRICT;
  INSERT INTO genai_histograms (id, metric, session_id, model, provider, token_type, tool_name, outcome, count, sum,
      min, max, first_ms, updated_ms, last_event_ms, b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15, b16, b17)
    SELECT s.id, s.metric, s.session_id, s.model, s.provider, s.token_type, s.tool_name, s.outcome, s.count, s.sum,
      s.min, s.max, s.first_ms, s.updated_ms, s.last_event_ms,
      IFNULL(SUM(b.count) FILTER (WHERE b.bucket = 0), 0), IFNULL(SUM(b.count) FILTER (WHERE b.bucket = 1), 0),
      IFNULL(SUM(b.count) FILTER (WHERE b.bucket = 2), 0), IFNULL(SUM(b.count) FILTER (WHERE b.bucket = 3), 0),
      IFNULL(SUM(b.count) FILTER (WHERE b.bucket = 4), 0), IFNULL(SUM(b.count) FILTER (WHERE b.bucket = 5), 0),
      IFNULL(SUM(b.count) FILTER (WHERE b.bucket = 6), 0), IFNULL(SUM(b.count) FILTER (WHERE b.bucket = 7), 0),
      IFNULL(SUM(b.count) FILTER (WHERE b.bucket = 8), 0), IFNULL(SUM(b.count) FILTER (WHERE b.bucket = 9), 0),
      IFNULL(SUM(b.count) FILTER (WHERE b.bucket = 10), 0), IFNULL(SUM(b.count) FILTER (WHERE b.bucket = 11), 0),
      IFNULL(SUM(b.count) FILTER (WHERE b.bucket = 12), 0), IFNULL(SUM(b.count) FILTER (WHERE b.bucket = 13), 0),
      IFNULL(SUM(b.count) FILTER (WHERE b.bucket = 14), 0), IFNULL(SUM(b.count) FILTER (WHERE b.bucket = 15), 0),
      IFNULL(SUM(b.count) FILTER (WHERE b.bucket = 16), 0), IFNULL(SUM(b.count) FILTER (WHERE b.bucket = 17), 0)
    FROM genai_series s LEFT JOIN genai_buckets b ON b.series_id = s.id
    GROUP BY s.id ORDER BY s.id;
  DROP TABLE genai_buckets;
  DROP TABLE genai_series;
  `,
  // Signal queue guards (docs/performance.md "Signals ingest"): the queue loses its UNIQUE
  // (kind, ref_key) index, a text b-tree written for every record; each record is queued by the
  // statement that makes it new instead (src/ledger/signals.ts record). Rows stored before their
  // signals were recorded (none on a ledger that was read at v5 or later) are listed in
  // signal_unqueued, so the next read of their document queues them once. The GenAI delta's
  // lookup of a request's start keeps a partial index on the chat rows. The queue is rebuilt
  // keeping every seq, so every watermark over it stays valid. Re-runnable.
  `
  CREATE TABLE IF NOT EXISTS signal_unqueued (
    kind    TEXT NOT NULL CHECK (kind IN ('chat', 'tool')),
    ref_key TEXT NOT NULL,
    PRIMARY KEY (kind, ref_key)
  ) STRICT, WITHOUT ROWID;
  -- The (kind, ref_key) lookups below, whatever indexes a re-run finds (dropped with the table).
  CREATE INDEX IF NOT EXISTS signal_queue_keys ON signal_queue (kind, ref_key);
  INSERT OR IGNORE INTO signal_unqueued (kind, ref_key)
    SELECT 'chat', e.dedup_key FROM events e
    WHERE NOT EXISTS (SELECT 1 FROM signal_queue q WHERE q.kind = 'chat' AND q.ref_key = e.dedup_key);
  INSERT OR IGNORE INTO signal_unqueued (kind, ref_key)
    SELECT 'tool', c.call_key FROM tool_calls c
    WHERE NOT EXISTS (SELECT 1 FROM signal_queue q WHERE q.kind = 'tool' AND q.ref_key = c.call_key)
      AND NOT EXISTS (SELECT 1 FROM signal_calls s WHERE s.call_key = c.call_key);

  DROP TABLE IF EXISTS signal_queue_guarded;
  CREATE TABLE signal_queue_guarded (
    seq        INTEGER PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('chat', 'tool', 'turn', 'compaction')),
    ref_key    TEXT NOT NULL,
    ts_ms      INTEGER NOT NULL,
    end_ms     INTEGER NOT NULL,
    outcome    TEXT CHECK (outcome IN ('success', 'failure', 'unknown')),
    cancelled  INTEGER NOT NULL DEFAULT 0 CHECK (cancelled IN (0, 1)),
    start_ms   INTEGER NOT NULL,
    -- chat, tool, compaction: their turn ('' = none); turn: the lead turn it nests under.
    turn_key   TEXT NOT NULL,
    message_id TEXT NOT NULL DEFAULT '',
    tool_use_id TEXT NOT NULL DEFAULT ''
  ) STRICT;
  INSERT INTO signal_queue_guarded SELECT seq, kind, ref_key, ts_ms, end_ms, outcome, cancelled, start_ms, turn_key,
    message_id, tool_use_id FROM signal_queue ORDER BY seq;
  DROP TABLE signal_queue;
  ALTER TABLE signal_queue_guarded RENAME TO signal_queue;
  -- A request's start by its dedup key (GenAI delta, src/ledger/genai.ts chatWindow).
  CREATE INDEX signal_queue_chat ON signal_queue (ref_key) WHERE kind = 'chat';
  `,
  // GenAI request rows (docs/performance.md "Signals ingest"): a request's three series of one
  // session, model and provider (token usage input and output, operation duration) become ONE
  // genai_rows row, so a commit writes one upsert per (session, model, provider) instead of three;
  // a tool duration series stays a row of its own (tool_name and outcome set; outcome '' = a
  // request row). A histogram with a NULL count is absent (a request row before its first known
  // duration). Rows move exactly: a request row takes the id of its first series (the export's
  // order), a tool row keeps its id; every total, time and bucket is copied. Re-runnable: the old
  // table is recreated empty when a first run dropped it.
  `
  CREATE TABLE IF NOT EXISTS genai_histograms (
    id            INTEGER PRIMARY KEY,
    metric        TEXT NOT NULL CHECK (metric IN ('token_usage', 'operation_duration', 'tool_duration')),
    session_id    TEXT NOT NULL,
    model         TEXT NOT NULL,
    provider      TEXT NOT NULL,
    token_type    TEXT NOT NULL,
    tool_name     TEXT NOT NULL,
    outcome       TEXT NOT NULL,
    count         INTEGER NOT NULL,
    sum           REAL NOT NULL,
    min           REAL NOT NULL,
    max           REAL NOT NULL,
    first_ms      INTEGER NOT NULL,
    updated_ms    INTEGER NOT NULL,
    last_event_ms INTEGER NOT NULL,
    b0 INTEGER NOT NULL DEFAULT 0, b1 INTEGER NOT NULL DEFAULT 0, b2 INTEGER NOT NULL DEFAULT 0, b3 INTEGER NOT NULL DEFAULT 0, b4 INTEGER NOT NULL DEFAULT 0, b5 INTEGER NOT NULL DEFAULT 0, b6 INTEGER NOT NULL DEFAULT 0, b7 INTEGER NOT NULL DEFAULT 0, b8 INTEGER NOT NULL DEFAULT 0, b9 INTEGER NOT NULL DEFAULT 0, b10 INTEGER NOT NULL DEFAULT 0, b11 INTEGER NOT NULL DEFAULT 0, b12 INTEGER NOT NULL DEFAULT 0, b13 INTEGER NOT NULL DEFAULT 0, b14 INTEGER NOT NULL DEFAULT 0, b15 INTEGER NOT NULL DEFAULT 0, b16 INTEGER NOT NULL DEFAULT 0, b17 INTEGER NOT NULL DEFAULT 0,
    UNIQUE (metric, session_id, model, provider, token_type, tool_name, outcome)
  ) STRICT;
  CREATE TABLE IF NOT EXISTS genai_rows (
    id         INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    model      TEXT NOT NULL,
    provider   TEXT NOT NULL,
    tool_name  TEXT NOT NULL,
    outcome    TEXT NOT NULL CHECK (outcome IN ('', 'success', 'failure', 'unknown')),
    -- A request's input tokens (b0..b14), or a tool's duration (b0..b17).
    count INTEGER,
    sum REAL,
    min REAL,
    max REAL,
    first_ms INTEGER,
    updated_ms INTEGER,
    last_event_ms INTEGER,
    b0 INTEGER NOT NULL DEFAULT 0, b1 INTEGER NOT NULL DEFAULT 0, b2 INTEGER NOT NULL DEFAULT 0,
    b3 INTEGER NOT NULL DEFAULT 0, b4 INTEGER NOT NULL DEFAULT 0, b5 INTEGER NOT NULL DEFAULT 0,
    b6 INTEGER NOT NULL DEFAULT 0, b7 INTEGER NOT NULL DEFAULT 0, b8 INTEGER NOT NULL DEFAULT 0,
    b9 INTEGER NOT NULL DEFAULT 0, b10 INTEGER NOT NULL DEFAULT 0, b11 INTEGER NOT NULL DEFAULT 0,
    b12 INTEGER NOT NULL DEFAULT 0, b13 INTEGER NOT NULL DEFAULT 0, b14 INTEGER NOT NULL DEFAULT 0,
    b15 INTEGER NOT NULL DEFAULT 0, b16 INTEGER NOT NULL DEFAULT 0, b17 INTEGER NOT NULL DEFAULT 0,
    -- A request's output tokens.
    out_count INTEGER,
    out_sum REAL,
    out_min REAL,
    out_max REAL,
    out_first_ms INTEGER,
    out_updated_ms INTEGER,
    out_last_event_ms INTEGER,
    o0 INTEGER NOT NULL DEFAULT 0, o1 INTEGER NOT NULL DEFAULT 0, o2 INTEGER NOT NULL DEFAULT 0,
    o3 INTEGER NOT NULL DEFAULT 0, o4 INTEGER NOT NULL DEFAULT 0, o5 INTEGER NOT NULL DEFAULT 0,
    o6 INTEGER NOT NULL DEFAULT 0, o7 INTEGER NOT NULL DEFAULT 0, o8 INTEGER NOT NULL DEFAULT 0,
    o9 INTEGER NOT NULL DEFAULT 0, o10 INTEGER NOT NULL DEFAULT 0, o11 INTEGER NOT NULL DEFAULT 0,
    o12 INTEGER NOT NULL DEFAULT 0, o13 INTEGER NOT NULL DEFAULT 0, o14 INTEGER NOT NULL DEFAULT 0,
    -- A request's operation duration.
    dur_count INTEGER,
    dur_sum REAL,
    dur_min REAL,
    dur_max REAL,
    dur_first_ms INTEGER,
    dur_updated_ms INTEGER,
    dur_last_event_ms INTEGER,
    d0 INTEGER NOT NULL DEFAULT 0, d1 INTEGER NOT NULL DEFAULT 0, d2 INTEGER NOT NULL DEFAULT 0,
    d3 INTEGER NOT NULL DEFAULT 0, d4 INTEGER NOT NULL DEFAULT 0, d5 INTEGER NOT NULL DEFAULT 0,
    d6 INTEGER NOT NULL DEFAULT 0, d7 INTEGER NOT NULL DEFAULT 0, d8 INTEGER NOT NULL DEFAULT 0,
    d9 INTEGER NOT NULL DEFAULT 0, d10 INTEGER NOT NULL DEFAULT 0, d11 INTEGER NOT NULL DEFAULT 0,
    d12 INTEGER NOT NULL DEFAULT 0, d13 INTEGER NOT NULL DEFAULT 0, d14 INTEGER NOT NULL DEFAULT 0,
    UNIQUE (session_id, model, provider, tool_name, outcome)
  ) STRICT;
  INSERT INTO genai_rows (id, session_id, model, provider, tool_name, outcome,
      count, sum, min, max, first_ms, updated_ms, last_event_ms, b0, b1,
      b2, b3, b4, b5, b6, b7, b8, b9, b10,
      b11, b12, b13, b14, b15, b16, b17)
    SELECT id, session_id, model, provider, tool_name, outcome,
      count, sum, min, max, first_ms, updated_ms, last_event_ms, b0, b1,
      b2, b3, b4, b5, b6, b7, b8, b9, b10,
      b11, b12, b13, b14, b15, b16, b17
    FROM genai_histograms WHERE metric = 'tool_duration' ORDER BY id;
  INSERT INTO genai_rows (id, session_id, model, provider, tool_name, outcome,
      count, sum, min, max, first_ms, updated_ms, last_event_ms, b0, b1, b2, b3, b4, b5, b6, b7, b8,
      b9, b10, b11, b12, b13, b14, out_count, out_sum, out_min, out_max, out_first_ms,
      out_updated_ms, out_last_event_ms, o0, o1, o2, o3, o4, o5, o6, o7, o8, o9, o10, o11, o12, o13,
      o14, dur_count, dur_sum, dur_min, dur_max, dur_first_ms, dur_updated_ms, dur_last_event_ms,
      d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13, d14)
    SELECT k.id, k.session_id, k.model, k.provider, '', '',
      i.count, i.sum, i.min, i.max, i.first_ms, i.updated_ms, i.last_event_ms, IFNULL(i.b0, 0),
      IFNULL(i.b1, 0), IFNULL(i.b2, 0), IFNULL(i.b3, 0), IFNULL(i.b4, 0), IFNULL(i.b5, 0),
      IFNULL(i.b6, 0), IFNULL(i.b7, 0), IFNULL(i.b8, 0), IFNULL(i.b9, 0), IFNULL(i.b10, 0),
      IFNULL(i.b11, 0), IFNULL(i.b12, 0), IFNULL(i.b13, 0), IFNULL(i.b14, 0), o.count, o.sum, o.min,
      o.max, o.first_ms, o.updated_ms, o.last_event_ms, IFNULL(o.b0, 0), IFNULL(o.b1, 0),
      IFNULL(o.b2, 0), IFNULL(o.b3, 0), IFNULL(o.b4, 0), IFNULL(o.b5, 0), IFNULL(o.b6, 0),
      IFNULL(o.b7, 0), IFNULL(o.b8, 0), IFNULL(o.b9, 0), IFNULL(o.b10, 0), IFNULL(o.b11, 0),
      IFNULL(o.b12, 0), IFNULL(o.b13, 0), IFNULL(o.b14, 0), d.count, d.sum, d.min, d.max,
      d.first_ms, d.updated_ms, d.last_event_ms, IFNULL(d.b0, 0), IFNULL(d.b1, 0), IFNULL(d.b2, 0),
      IFNULL(d.b3, 0), IFNULL(d.b4, 0), IFNULL(d.b5, 0), IFNULL(d.b6, 0), IFNULL(d.b7, 0),
      IFNULL(d.b8, 0), IFNULL(d.b9, 0), IFNULL(d.b10, 0), IFNULL(d.b11, 0), IFNULL(d.b12, 0),
      IFNULL(d.b13, 0), IFNULL(d.b14, 0)
    FROM (SELECT MIN(id) AS id, session_id, model, provider FROM genai_histograms
          WHERE metric != 'tool_duration' GROUP BY session_id, model, provider) k
      LEFT JOIN genai_histograms i ON i.metric = 'token_usage' AND i.token_type = 'input'
        AND i.session_id = k.session_id AND i.model = k.model AND i.provider = k.provider
        AND i.tool_name = '' AND i.outcome = ''
      LEFT JOIN genai_histograms o ON o.metric = 'token_usage' AND o.token_type = 'output'
        AND o.session_id = k.session_id AND o.model = k.model AND o.provider = k.provider
        AND o.tool_name = '' AND o.outcome = ''
      LEFT JOIN genai_histograms d ON d.metric = 'operation_duration'
        AND d.session_id = k.session_id AND d.model = k.model AND d.provider = k.provider
        AND d.tool_name = '' AND d.outcome = ''
    ORDER BY k.id;
  DROP TABLE genai_histograms;
  `,
  // Tool calls by message time (docs/performance.md, idle `report`): the report's tool-call totals
  // over its window read the window, not every call ever recorded (the events have events_ts).
  `
  CREATE INDEX IF NOT EXISTS tool_calls_ts ON tool_calls (ts_ms);
  `, // Requests leave the signal queue (docs/performance.md "Signals ingest"): a request's record is
  // its events row (signal_seq from the queue's one sequence, its turn and start), so a backfill
  // writes one row per request instead of two. Every chat queue row moves onto its event keeping
  // its seq (every watermark stays valid) and leaves the queue; the exporters read both tables in
  // one seq order (src/ledger/signals.ts batch). events is rebuilt (SQLite has no ADD COLUMN IF
  // NOT EXISTS); re-runnable: the NATURAL LEFT JOIN with a one-row table of NULLs names the three
  // columns whichever shape events has (a re-run keeps the values of the first run), and a re-run
  // of the guards migration listing moved requests as unqueued is undone here.
  `
  DROP TABLE IF EXISTS events_signal;
  CREATE TABLE events_signal (
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
    ingested_ms  INTEGER NOT NULL,
    -- The request's place in the signal delivery order (NULL: no signal record).
    signal_seq   INTEGER,
    turn_key     TEXT,
    start_ms     INTEGER
  ) STRICT;
  INSERT INTO events_signal
    SELECT x.id, x.dedup_key, x.adapter, x.session_id, x.agent, x.message_id, x.ts_ms, x.model, x.provider, x.project, x.input, x.output, x.cache_read, x.cache_write, x.total, x.cache_branch, x.recorded_cost, x.tool_calls, x.source_path, x.ingested_ms,
      COALESCE(q.seq, x.signal_seq), COALESCE(q.turn_key, x.turn_key), COALESCE(q.start_ms, x.start_ms)
    FROM (SELECT * FROM events NATURAL LEFT JOIN (SELECT NULL AS signal_seq, NULL AS turn_key, NULL AS start_ms)) x
      LEFT JOIN signal_queue q ON q.kind = 'chat' AND q.ref_key = x.dedup_key
    ORDER BY x.id;
  DELETE FROM signal_queue WHERE kind = 'chat'
    AND ref_key IN (SELECT dedup_key FROM events_signal WHERE signal_seq IS NOT NULL);
  DELETE FROM signal_unqueued WHERE kind = 'chat'
    AND ref_key IN (SELECT dedup_key FROM events_signal WHERE signal_seq IS NOT NULL);
  DROP TABLE events;
  ALTER TABLE events_signal RENAME TO events;
  CREATE INDEX events_ts ON events (ts_ms);
  CREATE INDEX events_signal_seq ON events (signal_seq) WHERE signal_seq IS NOT NULL;
  DROP INDEX IF EXISTS signal_queue_chat;
  `,
  // Tool calls leave the signal queue too (docs/performance.md "Signals ingest"): a final call's
  // record is its tool_calls row (signal_seq from the one sequence, its end, outcome, cut-off
  // flag, turn and ids), written by the INSERT that stores a call read with its result (a
  // backfill: every call), or by the UPDATE that makes a later one final. Every tool queue row
  // moves onto its call keeping its seq (every watermark, tool_outcome_state.counted_seq and
  // export_state.final_call_watermark included, stays valid) and leaves the queue. Rebuilt like
  // events above, re-runnable the same way (ids kept: they are the tool delta's call watermark).
  `
  DROP TABLE IF EXISTS tool_calls_signal;
  CREATE TABLE tool_calls_signal (
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
    ingested_ms  INTEGER NOT NULL,
    first_known  INTEGER NOT NULL DEFAULT 1 CHECK (first_known IN (0, 1)),
    -- The call's place in the signal delivery order once it is final (NULL: not final yet).
    signal_seq   INTEGER,
    end_ms       INTEGER,
    outcome      TEXT CHECK (outcome IN ('success', 'failure', 'unknown')),
    cancelled    INTEGER CHECK (cancelled IN (0, 1)),
    -- NULL on a final call: its paying request's (events.turn_key, message_id: the same message).
    turn_key     TEXT,
    message_id   TEXT,
    tool_use_id  TEXT
  ) STRICT;
  INSERT INTO tool_calls_signal
    SELECT x.id, x.call_key, x.usage_key, x.session_id, x.agent, x.tool_name, x.ts_ms, x.divisor, x.model,
      x.provider, x.project, x.share_input, x.share_output, x.share_cache_read, x.share_cache_write,
      x.source_path, x.ingested_ms, x.first_known,
      IFNULL(q.seq, x.signal_seq),
      CASE WHEN q.seq IS NULL THEN x.end_ms ELSE q.end_ms END,
      CASE WHEN q.seq IS NULL THEN x.outcome ELSE q.outcome END,
      CASE WHEN q.seq IS NULL THEN x.cancelled ELSE q.cancelled END,
      CASE WHEN q.seq IS NULL THEN x.turn_key ELSE q.turn_key END,
      CASE WHEN q.seq IS NULL THEN x.message_id ELSE q.message_id END,
      CASE WHEN q.seq IS NULL THEN x.tool_use_id ELSE q.tool_use_id END
    FROM (SELECT * FROM tool_calls NATURAL LEFT JOIN (SELECT NULL AS signal_seq, NULL AS end_ms,
            NULL AS outcome, NULL AS cancelled, NULL AS turn_key, NULL AS message_id, NULL AS tool_use_id)) x
      -- A call's first queue row (the queue has no UNIQUE index: never two, but a copy must not fail).
      LEFT JOIN (SELECT ref_key, MIN(seq) AS seq FROM signal_queue WHERE kind = 'tool' GROUP BY ref_key) m
        ON m.ref_key = x.call_key
      LEFT JOIN signal_queue q ON q.seq = m.seq
    ORDER BY x.id;
  DELETE FROM signal_queue WHERE kind = 'tool'
    AND ref_key IN (SELECT call_key FROM tool_calls_signal WHERE signal_seq IS NOT NULL);
  DELETE FROM signal_unqueued WHERE kind = 'tool'
    AND ref_key IN (SELECT call_key FROM tool_calls_signal WHERE signal_seq IS NOT NULL);
  DROP TABLE tool_calls;
  ALTER TABLE tool_calls_signal RENAME TO tool_calls;
  CREATE INDEX tool_calls_awaiting_usage ON tool_calls (usage_key) WHERE first_known = 0;
  CREATE INDEX tool_calls_ts ON tool_calls (ts_ms);
  CREATE INDEX tool_calls_signal_seq ON tool_calls (signal_seq) WHERE signal_seq IS NOT NULL;
  `,
  // ---- v17 (issue 23): which Cline client wrote each request and tool call (`cline.client`:
  // cli, vscode, ...), as its adapter says; '' for rows stored before, or an adapter that does not say.
  // end_known = 0: the source records when the request started only (the task format), so its end
  // time is the start's, marked approximate (`cline.end.known=false`), never invented.
  `
  ALTER TABLE events ADD COLUMN client TEXT NOT NULL DEFAULT '';
  ALTER TABLE tool_calls ADD COLUMN client TEXT NOT NULL DEFAULT '';
  ALTER TABLE events ADD COLUMN end_known INTEGER NOT NULL DEFAULT 1 CHECK (end_known IN (0, 1));
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
