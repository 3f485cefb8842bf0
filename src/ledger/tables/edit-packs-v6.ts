/**
 * Schema v6, one self-contained step (issue 29's cost, the cold backfill): the edits a commit adds
 * for one document are ONE row, not a row per edit.
 *
 * - `edit_packs`: per document, tool and commit, what its new edits share (adapter, session, agent,
 *   tool, project, client, source path, ingest time) as columns, and each edit's own values as one element
 *   of a JSON array (`edits`, EDIT_FIELDS' order), with the pack's time span (`ts_min`, `ts_max`, each
 *   indexed: the report's edges expand only the packs that meet them) and its signal seqs: an observation's
 *   new edits take consecutive seqs (src/ledger/usage/ingest.ts), so the i-th edit of a pack is
 *   `seq_first + i`, and `seq_last` is the index of the signal batch's edit branch.
 *   Its id is the delta exporter's window (export_state.edit_watermark): a pack is committed whole,
 *   and a window is whole packs of at most its number of edits (Edits.windowEnd).
 *   Why JSON: SQLite reads it in place (`->>`, json_each) for the few readers of single edits, and
 *   V8's JSON.stringify of a dozen ids and numbers is the cheapest encoding JS has.
 * - `edit_keys`: an edit's key, the pack holding it and its place there, WITHOUT ROWID: what keeps an
 *   edit exactly once (ON CONFLICT DO NOTHING, as before) and what finds a call's edits by the key's
 *   prefix, with the four values the signal batch sums per call for its execute_tool span (decision,
 *   lines, exactness: src/ledger/signals/watermarks.ts), so that sum parses no pack's JSON (it did:
 *   +0.5 s over the 2,000 tasks' history of 104,400 records).
 * - `edits` becomes a VIEW of every edit with the columns of the v5 table (its `id` the pack's), so
 *   what reads edits rarely (the report's edges, tests, a read-only view of an older ledger) keeps one
 *   spelling; what runs per export reads the tables through their indexes.
 *
 * Measured (2,000 tasks, 18,000 edits, docs/performance.md "Issue 29's edits packed"): storing the edits
 * 279 -> 138 ms of CPU (bench/delivered-storage.ts); the cold report 4,090 -> 3,780 ms. The upgrade turns each v5 row into a pack of one whose id is the row's id, so
 * every watermark, backfill position and signal seq stays valid; it runs in the upgrade's transaction
 * (src/ledger/migrate.ts).
 */

/** The per-edit values of a pack's element, in order (`edits` JSON arrays; the view names them). */
export const EDIT_FIELDS = [
  "edit_key",
  "operation",
  "decision",
  "source",
  "language",
  "lines_added",
  "lines_removed",
  "exact",
  "ts_ms",
  "model",
  "provider",
] as const;

export type EditField = (typeof EDIT_FIELDS)[number];

/** An edit's value as SQL, from its element (a JSON array, `el`). */
export const editFieldSql = (el: string, f: EditField): string => `(${el} ->> ${EDIT_FIELDS.indexOf(f)})`;

/** Every v5 column of an edit as SQL, named as the view names it (`p`: the pack, `el`: the element, `i`: its place). */
export function editColumnsSql(p: string, el: string, i: string): string {
  const at = (f: EditField) => `${editFieldSql(el, f)} AS ${f}`;
  return [
    `${p}.id AS id`,
    at("edit_key"),
    `${p}.adapter AS adapter`,
    `${p}.session_id AS session_id`,
    `${p}.agent AS agent`,
    `${p}.tool_name AS tool_name`,
    at("operation"),
    at("decision"),
    at("source"),
    at("language"),
    at("lines_added"),
    at("lines_removed"),
    at("exact"),
    at("ts_ms"),
    at("model"),
    at("provider"),
    `${p}.project AS project`,
    `${p}.client AS client`,
    `${p}.source_path AS source_path`,
    `${p}.ingested_ms AS ingested_ms`,
    `${p}.seq_first + ${i} AS signal_seq`,
  ].join(", ");
}

const PACK_TABLES = `
  CREATE TABLE edit_packs (
    id          INTEGER PRIMARY KEY,
    adapter     TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    agent       TEXT NOT NULL,
    tool_name   TEXT NOT NULL,
    project     TEXT NOT NULL,
    client      TEXT NOT NULL,
    source_path TEXT NOT NULL,
    ingested_ms INTEGER NOT NULL,
    ts_min      INTEGER NOT NULL,
    ts_max      INTEGER NOT NULL,
    seq_first   INTEGER,
    seq_last    INTEGER,
    n           INTEGER NOT NULL CHECK (n > 0),
    edits       TEXT NOT NULL,
    -- The report's sums of the pack (accepted lines, edits by decision: PACK_SUMS), for a view whose
    -- dimensions are the pack's columns (by session, agent, tool, project, client) over packs inside its window.
    accepted_added   INTEGER NOT NULL,
    accepted_removed INTEGER NOT NULL,
    accepted    INTEGER NOT NULL,
    rejected    INTEGER NOT NULL,
    failed      INTEGER NOT NULL,
    CHECK ((seq_first IS NULL) = (seq_last IS NULL))
  ) STRICT;
  CREATE INDEX edit_packs_ts_min ON edit_packs (ts_min);
  CREATE INDEX edit_packs_ts_max ON edit_packs (ts_max);
  CREATE INDEX edit_packs_signal_seq ON edit_packs (seq_last) WHERE seq_last IS NOT NULL;

  CREATE TABLE edit_keys (
    edit_key      TEXT PRIMARY KEY,
    pack          INTEGER NOT NULL,
    i             INTEGER NOT NULL,
    -- What a call's execute_tool span sums over its edits, here so that sum reads no pack.
    decision      TEXT NOT NULL CHECK (decision IN ('accepted', 'rejected', 'failed')),
    lines_added   INTEGER NOT NULL,
    lines_removed INTEGER NOT NULL,
    exact         INTEGER NOT NULL
  ) STRICT, WITHOUT ROWID;
`;

const EDITS_VIEW = `
  CREATE VIEW edits AS
    SELECT ${editColumnsSql("p", "j.value", "j.key")} FROM edit_packs p, json_each(p.edits) j;
`;

export const EDIT_PACKS_V6 = `
  ${PACK_TABLES}
  INSERT INTO edit_packs (id, adapter, session_id, agent, tool_name, project, client, source_path, ingested_ms, ts_min,
      ts_max, seq_first, seq_last, n, edits, accepted_added, accepted_removed, accepted, rejected, failed)
    SELECT id, adapter, session_id, agent, tool_name, project, client, source_path, ingested_ms, ts_ms, ts_ms, signal_seq,
      signal_seq, 1, json_array(json_array(${EDIT_FIELDS.join(", ")})),
      CASE decision WHEN 'accepted' THEN lines_added ELSE 0 END, CASE decision WHEN 'accepted' THEN lines_removed ELSE 0 END,
      decision = 'accepted', decision = 'rejected', decision = 'failed'
    FROM edits ORDER BY id;
  INSERT INTO edit_keys (edit_key, pack, i, decision, lines_added, lines_removed, exact)
    SELECT edit_key, id, 0, decision, lines_added, lines_removed, exact FROM edits;
  DROP TABLE edits;
  ${EDITS_VIEW}
`;
