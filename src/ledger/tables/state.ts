/**
 * The ledger's own state: its identity, what each source looked like when last read, the
 * remembered directory listings, and each metrics exporter's delivery progress.
 */
export const STATE_TABLES = `
  -- instance_id (service.instance.id), created_ms, stream_start_ns (the cumulative streams' start).
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;

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

  -- What each of an agent's directories held when last listed, with its mark (src/ledger/collection/listings.ts,
  -- src/adapter/listings.ts), so an idle report stats a folder instead of listing it. A cache only.
  CREATE TABLE listings (
    scope    TEXT NOT NULL,
    path     TEXT NOT NULL,
    mark     TEXT NOT NULL,
    taken_ms INTEGER NOT NULL,
    entries  TEXT NOT NULL,
    PRIMARY KEY (scope, path)
  ) STRICT;

  -- Per metrics exporter: the id watermarks a delta exporter has delivered (events, tool calls,
  -- captures, compactions; final_call_watermark: the highest signal seq whose final tool calls
  -- were delivered), its window start and when anything was last delivered.
  CREATE TABLE export_state (
    exporter             TEXT PRIMARY KEY,
    event_watermark      INTEGER NOT NULL DEFAULT 0,
    call_watermark       INTEGER NOT NULL DEFAULT 0,
    window_start_ns      TEXT NOT NULL,
    last_success_ms      INTEGER NOT NULL DEFAULT 0,
    capture_watermark    INTEGER NOT NULL DEFAULT 0,
    compaction_watermark INTEGER NOT NULL DEFAULT 0,
    final_call_watermark INTEGER NOT NULL DEFAULT 0
  ) STRICT;

  -- Per metrics exporter: how far a cumulative export read in pages has been acknowledged by the
  -- backend (phase, the last acknowledged row id, delivered of total), with the watermarks and
  -- options of the pass it belongs to, so a cut, a timeout, SIGTERM or kill -9 keeps what was
  -- delivered and the next export resumes after it (src/ledger/export-state/backfill.ts,
  -- docs/design-export.md "A backfill, page by page"). No row: no backfill under way.
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
    phase                TEXT NOT NULL CHECK (phase IN ('usage', 'tool', 'outcome', 'genai', 'done')),
    after_id             INTEGER NOT NULL,
    delivered            INTEGER NOT NULL,
    total                INTEGER NOT NULL
  ) STRICT;
`;

/**
 * Ledger v2: where a pass over FOLDED series stands (src/ledger/usage/fold.ts): the last acknowledged
 * group key as a JSON array (NULL: the pass reads rows by id, after_id). One statement, kept apart
 * so the v2 step can take other changes beside it.
 */
export const EXPORT_BACKFILL_KEY_V2 = "ALTER TABLE export_backfill ADD COLUMN after_key TEXT;";
