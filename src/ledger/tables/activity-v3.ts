/**
 * Schema v3, "what Cline delivered", the activity part (issue 29 items 3-5): active time, commits
 * and pull requests, and session starts (ActiveTimeline, DeliveryRecord, SessionStartRecord in
 * src/adapter/types.ts), kept exactly once by their keys and summed into running series in the
 * same transaction as the document's events (src/ledger/activity.ts). One self-contained step
 * (it touches no table another v3 step changes, except that every step may drop the checkpoints):
 *
 * - `activity`: one row per record (ON CONFLICT (activity_key) DO NOTHING: the first view of a
 *   key wins, so a gap seen again after a rewrite or a restart adds nothing). `kind` is the
 *   metric (active_time, commit, pull_request, session), `detail` its attribute (active_time:
 *   user | agent; session: new | resumed; '' for commits and pull requests), `amount` what it adds
 *   (ms of active time; 1 for the others). Its id is a delta exporter's window
 *   (export_state.activity_watermark).
 *   Active time is stored summed per timeline, type and hour of a read (not one row per gap: a
 *   backfill would write a row per message), keyed `<stream>|<type>|<first gap start>`.
 * - `activity_streams`: per timeline (a lead document), how far its gaps are counted (the end of
 *   the last one); a read adds only the gaps that start at or after it, so the first view of a
 *   stretch wins and a rewrite (a cancelled request deleted on resume) never counts one twice.
 * - `activity_series`: the running totals per exported series (`amount` summed, `records` counted).
 * - export_state gains `activity_watermark` (what a delta exporter delivered of `activity`).
 * - every checkpoint is dropped, so the next pass reads every source Cline still has once more and
 *   the history's activity is counted (a checkpoint would skip an unchanged document forever);
 *   events, calls and every other record are kept by their keys, so nothing else counts twice.
 */
export const ACTIVITY_V3 = `
  CREATE TABLE activity (
    id           INTEGER PRIMARY KEY,
    activity_key TEXT NOT NULL UNIQUE,
    kind         TEXT NOT NULL CHECK (kind IN ('active_time', 'commit', 'pull_request', 'session')),
    detail       TEXT NOT NULL,
    amount       INTEGER NOT NULL CHECK (amount >= 0),
    adapter      TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    agent        TEXT NOT NULL,
    ts_ms        INTEGER NOT NULL,
    model        TEXT NOT NULL,
    provider     TEXT NOT NULL,
    project      TEXT NOT NULL,
    client       TEXT NOT NULL DEFAULT '',
    source_path  TEXT NOT NULL,
    ingested_ms  INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX activity_ts ON activity (ts_ms);

  CREATE TABLE activity_series (
    id            INTEGER PRIMARY KEY,
    session_id    TEXT NOT NULL,
    agent         TEXT NOT NULL,
    project       TEXT NOT NULL,
    model         TEXT NOT NULL,
    provider      TEXT NOT NULL,
    client        TEXT NOT NULL,
    kind          TEXT NOT NULL,
    detail        TEXT NOT NULL,
    amount        INTEGER NOT NULL DEFAULT 0,
    records       INTEGER NOT NULL DEFAULT 0,
    first_ms      INTEGER NOT NULL,
    updated_ms    INTEGER NOT NULL,
    last_event_ms INTEGER NOT NULL DEFAULT 0,
    UNIQUE (session_id, agent, project, model, provider, client, kind, detail)
  ) STRICT;

  CREATE TABLE activity_streams (
    stream_key TEXT PRIMARY KEY,
    covered_ms INTEGER NOT NULL
  ) STRICT, WITHOUT ROWID;

  ALTER TABLE export_state ADD COLUMN activity_watermark INTEGER NOT NULL DEFAULT 0;

  -- The history's activity: every source is read again at the next pass (see above).
  DELETE FROM checkpoints;
`;
