/**
 * The statements that write the signal records (src/ledger/signals/signals.ts): documents, open calls,
 * results, turns, each record's seq and the legacy list of rows stored before their signals.
 */
import type Database from "better-sqlite3";

/** The record side's statements, prepared once per ledger (on the first commit). */
export function prepareSignalWrites(db: Database.Database) {
  return {
    // putDocument and putTurn (a row per document and per turn of a backfill) bind by position, in
    // their column order: a named parameter is a property lookup from native code (docs/performance.md,
    // "The cold backfill's per-row cost").
    // Returns the stored last ts (the max over the document's reads): whether it is quiet.
    putDocument: db
      .prepare(
        `INSERT INTO signal_documents (source_path, root_session_id, session_id, agent, last_ts_ms)
         VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (source_path) DO UPDATE SET last_ts_ms = max(last_ts_ms, excluded.last_ts_ms)
         RETURNING last_ts_ms`,
      )
      .pluck(),
    // By position too: a row per call read without its result (every call of a task-format backfill).
    putCall: db.prepare(
      `INSERT INTO signal_calls (call_key, message_id, tool_use_id, turn_key, source_path)
       VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (call_key) DO NOTHING`,
    ),
    putResult: db.prepare(
      `INSERT INTO signal_results (call_key, message_id, ts_ms, is_error) VALUES (@callKey, @messageId, @tsMs, @isError)
       ON CONFLICT (call_key) DO NOTHING`,
    ),
    openCall: db.prepare(
      `SELECT t.ts_ms AS tsMs FROM signal_calls s JOIN tool_calls t ON t.call_key = s.call_key
       WHERE s.call_key = @callKey AND s.final = 0`,
    ),
    // A stored call's record (final now): one UPDATE, numbered once (signal_seq IS NULL).
    putCallRecord: db.prepare(
      `UPDATE tool_calls SET signal_seq = @seq, end_ms = @endMs, outcome = @outcome, cancelled = @cancelled,
         turn_key = @turnKey, message_id = @messageId, tool_use_id = @toolUseId
       WHERE call_key = @callKey AND signal_seq IS NULL`,
    ),
    // The guard of a late call: only the statement that flips it returns its ids.
    closeCall: db.prepare(
      `UPDATE signal_calls SET final = 1 WHERE call_key = @callKey AND final = 0
       RETURNING message_id AS messageId, tool_use_id AS toolUseId, turn_key AS turnKey`,
    ),
    putTurn: db.prepare(
      `INSERT INTO signal_turns (turn_key, root_session_id, session_id, agent, turn_id, project, start_ms, end_ms,
         closed, source_path)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (turn_key) DO UPDATE SET end_ms = max(end_ms, excluded.end_ms),
         closed = max(closed, excluded.closed)
       WHERE final = 0`,
    ),
    // A turn a later prompt closed, in one statement: stored
    // final, or flipped 0 -> 1; its stored end (the max over its reads) and start come back only
    // then (the guard of its record), as an array (no object per row). Its owner is in its key.
    putFinalTurn: db
      .prepare(
        `INSERT INTO signal_turns (turn_key, root_session_id, session_id, agent, turn_id, project, start_ms,
           end_ms, closed, source_path, final)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
         ON CONFLICT (turn_key) DO UPDATE SET end_ms = max(end_ms, excluded.end_ms),
           closed = max(closed, excluded.closed), final = 1
         WHERE final = 0
         RETURNING end_ms, start_ms`,
      )
      .raw(),
    closeTurn: db.prepare("UPDATE signal_turns SET final = 1 WHERE turn_key = @turnKey AND final = 0"),
    // A quiet document's calls still open from earlier reads (signal_calls_open).
    openCallsOfDocument: db.prepare(
      `SELECT s.call_key AS callKey, s.turn_key AS turnKey, t.ts_ms AS tsMs
       FROM signal_calls s JOIN tool_calls t ON t.call_key = s.call_key
       WHERE s.final = 0 AND s.source_path = @sourcePath`,
    ),
    openCallsOfTurn: db.prepare(
      `SELECT s.call_key AS callKey, t.ts_ms AS tsMs FROM signal_calls s JOIN tool_calls t ON t.call_key = s.call_key
       WHERE s.final = 0 AND s.turn_key = @turnKey`,
    ),
    turnAt: db.prepare(
      `SELECT turn_key AS turnKey FROM signal_turns
       WHERE session_id = @sessionId AND agent = @agent AND start_ms <= @tsMs
       ORDER BY start_ms DESC LIMIT 1`,
    ),
    leadTurnAt: db.prepare(
      // signal_turns_by_session (session_id, start_ms): the lead's turns are its root session's.
      `SELECT turn_key AS turnKey FROM signal_turns
       WHERE session_id = @rootSessionId AND root_session_id = @rootSessionId AND agent = 'lead'
         AND start_ms <= @startMs
       ORDER BY start_ms DESC LIMIT 1`,
    ),
    quietCalls: db.prepare(
      `SELECT s.call_key AS callKey, t.ts_ms AS tsMs, d.last_ts_ms AS lastTsMs
       FROM signal_calls s JOIN signal_documents d ON d.source_path = s.source_path
         JOIN tool_calls t ON t.call_key = s.call_key
       WHERE s.final = 0 AND d.last_ts_ms <= @cutoff`,
    ),
    quietTurns: db.prepare(
      `SELECT t.turn_key AS turnKey, t.root_session_id AS rootSessionId, t.session_id AS sessionId, t.agent,
         t.start_ms AS startMs, t.end_ms AS endMs, t.source_path AS sourcePath
       FROM signal_turns t JOIN signal_documents d ON d.source_path = t.source_path
       WHERE t.final = 0 AND d.last_ts_ms <= @cutoff
       ORDER BY t.agent = 'lead' DESC, t.start_ms`,
    ),
    callDims: db.prepare(
      `SELECT session_id AS sessionId, client, project, model, provider, tool_name AS toolName FROM tool_calls
       WHERE call_key = @callKey`,
    ),
    anyLegacy: db.prepare("SELECT 1 FROM signal_unqueued LIMIT 1"),
    // `IS NOT NULL`: MAX over the partial index (without it, SQLite scans every event).
    nextSeq: db.prepare(
      `SELECT max((SELECT IFNULL(MAX(seq), 0) FROM signal_queue),
         (SELECT IFNULL(MAX(signal_seq), 0) FROM events WHERE signal_seq IS NOT NULL),
         (SELECT IFNULL(MAX(signal_seq), 0) FROM tool_calls WHERE signal_seq IS NOT NULL),
         (SELECT IFNULL(MAX(seq_last), 0) FROM edit_packs WHERE seq_last IS NOT NULL)) + 1 AS next`,
    ),
    putRequest: db.prepare(
      `UPDATE events SET signal_seq = @seq, turn_key = @turnKey, start_ms = @startMs
       WHERE dedup_key = @dedupKey AND signal_seq IS NULL`,
    ),
    anyOpenCall: db.prepare("SELECT 1 FROM signal_calls WHERE final = 0 LIMIT 1"),
    takeLegacy: db.prepare("DELETE FROM signal_unqueued WHERE kind = @kind AND ref_key = @refKey"),
  };
}
