/**
 * Schema v9, one self-contained step (issue 30's bounded export memory): a cumulative export reads the
 * activity series (active time, commits, pull requests, session starts) in pages like every other
 * series, not whole into its first request.
 *
 * - `export_backfill.phase` gains `activity` (between `edit` and `genai`): where a pass in pages that a
 *   backend acknowledged in part stands. Before, the activity series (a few per session: ~20,000 at
 *   10,000 sessions) were translated whole and sent with the first page, so a first export's memory
 *   grew with the history (docs/performance.md "The first export's peak RSS").
 * - `export_backfill.activity_watermark`: the activity watermark of the collection that began the pass,
 *   committed with its last page as the other watermarks are. Before, a resumed pass committed 0, and
 *   the next export took the whole activity for new.
 * - The upgrade keeps a pass in progress (its position, its watermarks) and gives it an activity
 *   watermark of 0: its next export after the pass is a whole one, which a cumulative backend takes as
 *   the same totals again. SQLite cannot change a CHECK in place: the table is rebuilt, in the upgrade's
 *   transaction (src/ledger/migrate.ts).
 */
export const EXPORT_BACKFILL_ACTIVITY_V9 = `
  ALTER TABLE export_backfill RENAME TO export_backfill_v8;
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
    phase                TEXT NOT NULL CHECK (phase IN ('usage', 'tool', 'outcome', 'edit', 'activity', 'genai', 'done')),
    after_id             INTEGER NOT NULL,
    delivered            INTEGER NOT NULL,
    total                INTEGER NOT NULL,
    after_key            TEXT,
    edit_watermark       INTEGER NOT NULL DEFAULT 0,
    activity_watermark   INTEGER NOT NULL DEFAULT 0
  ) STRICT;
  INSERT INTO export_backfill SELECT *, 0 FROM export_backfill_v8;
  DROP TABLE export_backfill_v8;
`;
