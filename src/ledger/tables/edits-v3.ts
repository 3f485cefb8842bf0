/**
 * Schema v3, "what Cline delivered" (issue 29): the file edits an adapter reads (EditRecord,
 * src/adapter/types.ts), kept exactly once by `edit_key`, and their running series, written in
 * the same transaction as the document's events (src/ledger/edits.ts). One self-contained step:
 *
 * - `edits`: one row per edit (ON CONFLICT (edit_key) DO NOTHING, as events and tool calls). Its
 *   id is a delta exporter's window (export_state.edit_watermark); signal_seq its place in the one
 *   order of signal records (its `cline.code_edit` event), taken from the same sequence as a
 *   request's, so a signal watermark stays one number; call_key joins it to its execute_tool span.
 * - `edit_series`: the running totals per exported series (cline.code_edit.decisions,
 *   cline.lines_of_code), summed from the rows a commit adds, like tool_series. The inexact part
 *   of the lines (edits whose files do not hold everything they changed) is kept apart so the
 *   counter can mark it (`cline.lines.exact`) without a second series per edit.
 * - export_state and export_backfill gain `edit_watermark` (what a delta exporter delivered; the
 *   watermark a cumulative pass in pages commits), and export_backfill's phase its `edit` value:
 *   SQLite cannot change a CHECK in place, so that small table is rebuilt (renamed away, created
 *   with the v2 columns plus the new one, its rows copied, the old one dropped) and a pass in
 *   progress keeps its position.
 *
 * - every checkpoint is dropped, so the next pass reads every source Cline still has once more and
 *   the edits of the whole history are counted (a checkpoint would skip an unchanged document, and
 *   with it its edits, forever). Nothing else is counted twice: events, calls, captures, compactions
 *   and signal records are all kept by their keys (a re-read of a known document adds none of them).
 *   The cost is one read of the history, as a backfill's, at the first pass after the upgrade.
 *
 * migrate.ts runs it in the one transaction of the upgrade.
 */
export const EDITS_V3 = `
  CREATE TABLE edits (
    id            INTEGER PRIMARY KEY,
    edit_key      TEXT NOT NULL UNIQUE,
    call_key      TEXT NOT NULL,
    usage_key     TEXT NOT NULL,
    adapter       TEXT NOT NULL,
    session_id    TEXT NOT NULL,
    agent         TEXT NOT NULL,
    tool_name     TEXT NOT NULL,
    operation     TEXT NOT NULL CHECK (operation IN ('create', 'modify', 'delete')),
    decision      TEXT NOT NULL CHECK (decision IN ('accepted', 'rejected', 'failed')),
    source        TEXT NOT NULL CHECK (source IN ('auto', 'user', 'unknown')),
    language      TEXT NOT NULL,
    lines_added   INTEGER NOT NULL CHECK (lines_added >= 0),
    lines_removed INTEGER NOT NULL CHECK (lines_removed >= 0),
    exact         INTEGER NOT NULL CHECK (exact IN (0, 1)),
    ts_ms         INTEGER NOT NULL,
    model         TEXT NOT NULL,
    provider      TEXT NOT NULL,
    project       TEXT NOT NULL,
    client        TEXT NOT NULL DEFAULT '',
    source_path   TEXT NOT NULL,
    ingested_ms   INTEGER NOT NULL,
    signal_seq    INTEGER
  ) STRICT;
  CREATE INDEX edits_call ON edits (call_key);
  CREATE INDEX edits_ts ON edits (ts_ms);
  CREATE INDEX edits_signal_seq ON edits (signal_seq) WHERE signal_seq IS NOT NULL;

  CREATE TABLE edit_series (
    id                    INTEGER PRIMARY KEY,
    session_id            TEXT NOT NULL,
    agent                 TEXT NOT NULL,
    project               TEXT NOT NULL,
    model                 TEXT NOT NULL,
    provider              TEXT NOT NULL,
    client                TEXT NOT NULL,
    tool_name             TEXT NOT NULL,
    operation             TEXT NOT NULL,
    decision              TEXT NOT NULL,
    source                TEXT NOT NULL,
    language              TEXT NOT NULL,
    edits                 INTEGER NOT NULL DEFAULT 0,
    lines_added           INTEGER NOT NULL DEFAULT 0,
    lines_removed         INTEGER NOT NULL DEFAULT 0,
    -- Of the above, what edits whose counts are inexact contributed.
    inexact_edits         INTEGER NOT NULL DEFAULT 0,
    inexact_lines_added   INTEGER NOT NULL DEFAULT 0,
    inexact_lines_removed INTEGER NOT NULL DEFAULT 0,
    first_ms              INTEGER NOT NULL,
    updated_ms            INTEGER NOT NULL,
    last_event_ms         INTEGER NOT NULL DEFAULT 0,
    UNIQUE (session_id, agent, project, model, provider, client, tool_name, operation, decision, source,
      language)
  ) STRICT;

  ALTER TABLE export_state ADD COLUMN edit_watermark INTEGER NOT NULL DEFAULT 0;

  ALTER TABLE export_backfill RENAME TO export_backfill_v2;
  CREATE TABLE export_backfill (
    exporter             TEXT PRIMARY KEY,
    options              TEXT NOT NULL,
    started_ms           INTEGER NOT NULL,
    event_watermark      INTEGER NOT NULL,
    call_watermark       INTEGER NOT NULL,
    capture_watermark    INTEGER NOT NULL,
    compaction_watermark INTEGER NOT NULL,
    final_call_watermark INTEGER NOT NULL,
    window_start_ns      TEXT NOT NULL,
    phase                TEXT NOT NULL CHECK (phase IN ('usage', 'tool', 'outcome', 'edit', 'genai', 'done')),
    after_id             INTEGER NOT NULL,
    delivered            INTEGER NOT NULL,
    total                INTEGER NOT NULL,
    after_key            TEXT,
    edit_watermark       INTEGER NOT NULL DEFAULT 0
  ) STRICT;
  INSERT INTO export_backfill SELECT *, 0 FROM export_backfill_v2;
  DROP TABLE export_backfill_v2;

  -- The history's edits: every source is read again at the next pass (see above).
  DELETE FROM checkpoints;
`;
