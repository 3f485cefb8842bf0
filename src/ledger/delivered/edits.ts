/**
 * File edits (issue 29; tables in tables/edits-v3.ts, packed per document and commit by
 * tables/edit-packs-v6.ts): each EditRecord an adapter read is stored exactly once, by its place in
 * its call's row (tables/edit-call-sums-v8.ts, delivered/call-edit-sums.ts), the new ones of one
 * observation as one `edit_packs` row, in the commit transaction of its document; their running series (`edit_series`) are summed from the packs when read (schema v7,
 * series-store.ts `fold`). The exporters read those series (cumulative: live rows, in pages, or folded
 * in SQL by src/ledger/usage/fold.ts) or the edits of one pack-id window aggregated per series (delta:
 * export_state.edit_watermark). Generic: the ledger knows the normalized record, no format.
 */
import type Database from "better-sqlite3";
import type { EditRecord } from "../../adapter/types.ts";
import { foldSql, idReads, SERIES_FOLDS_VERSION, SeriesStore } from "./series-store.ts";

/** Schema version that added the edits (tables/edits-v3.ts). */
export const EDITS_VERSION = 3;
/** Schema version that packs them (tables/edit-packs-v6.ts). */
export const EDIT_PACKS_VERSION = 6;

/** The key columns of an edit series, in order (ONE list: fold.ts and the upsert share it). */
export const EDIT_SERIES_KEY: readonly string[] = [
  "session_id",
  "agent",
  "project",
  "model",
  "provider",
  "client",
  "tool_name",
  "operation",
  "decision",
  "source",
  "language",
];

/** One series of `cline.code_edit.decisions` and `cline.lines_of_code`. */
export interface EditSeriesRow {
  readonly sessionId: string;
  readonly agent: string;
  readonly project: string;
  readonly model: string;
  readonly provider: string;
  readonly client: string;
  readonly toolName: string;
  readonly operation: string;
  readonly decision: string;
  readonly source: string;
  readonly language: string;
  readonly edits: number;
  readonly linesAdded: number;
  readonly linesRemoved: number;
  /** Of the above, the edits whose counts are inexact and their lines. */
  readonly inexactEdits: number;
  readonly inexactLinesAdded: number;
  readonly inexactLinesRemoved: number;
  readonly firstMs: number;
  readonly updatedMs: number;
  /** The newest proposing-message `ts` of the edits summed. */
  readonly lastEventMs: number;
}

const KEY = EDIT_SERIES_KEY.join(", ");
const COLS = `session_id AS sessionId, agent, project, model, provider, client, tool_name AS toolName, operation,
  decision, source, language, edits, lines_added AS linesAdded, lines_removed AS linesRemoved,
  inexact_edits AS inexactEdits, inexact_lines_added AS inexactLinesAdded,
  inexact_lines_removed AS inexactLinesRemoved, first_ms AS firstMs, updated_ms AS updatedMs,
  last_event_ms AS lastEventMs`;
/** The series table's sum columns, in SUMS' order (a fold adds each). */
const SUM_COLUMNS = [
  "edits",
  "lines_added",
  "lines_removed",
  "inexact_edits",
  "inexact_lines_added",
  "inexact_lines_removed",
];
/** The series totals of a set of edits rows (delta), SUM_COLUMNS then the times. */
const SUMS = `COUNT(*) AS edits, SUM(lines_added) AS linesAdded, SUM(lines_removed) AS linesRemoved,
  SUM(1 - exact) AS inexactEdits, SUM(lines_added * (1 - exact)) AS inexactLinesAdded,
  SUM(lines_removed * (1 - exact)) AS inexactLinesRemoved, MIN(ingested_ms) AS firstMs,
  MAX(ingested_ms) AS updatedMs, MAX(ts_ms) AS lastEventMs`;
/**
 * The edits of one pack-id window summed per series, the key in EDIT_SERIES_KEY's order: the delta
 * exporter's window, and what a fold adds to `edit_series` (series-store.ts foldSql).
 */
const DELTA = `SELECT session_id AS sessionId, agent, project, model, provider, client, tool_name AS toolName,
    operation, decision, source, language, ${SUMS}
  FROM edits WHERE id > @after AND id <= @upTo GROUP BY ${KEY} ORDER BY MIN(id)`;

/**
 * Why an edit cannot be stored (an adapter's bug), or undefined: line counts must be non-negative
 * integers and the enums the schema's. Such an edit is skipped and reported (CommitResult), not
 * thrown: one bad record must not stop its document, and every other one, from being committed.
 */
export function invalidEdit(e: EditRecord): string | undefined {
  if (!isCallEditKey(e.editKey, e.callKey))
    return `edit key ${e.editKey} is not its call key ${e.callKey}, |, a number`;
  if (!isLineCount(e.linesAdded)) return `linesAdded is not a line count: ${e.linesAdded}`;
  if (!isLineCount(e.linesRemoved)) return `linesRemoved is not a line count: ${e.linesRemoved}`;
  if (!Number.isSafeInteger(e.timestampMs)) return `timestampMs is not an integer: ${e.timestampMs}`;
  if (!OPERATIONS.has(e.operation)) return `unknown operation ${e.operation}`;
  if (!DECISIONS.has(e.decision)) return `unknown decision ${e.decision}`;
  if (!SOURCES.has(e.source)) return `unknown source ${e.source}`;
  return undefined;
}

const isLineCount = (n: number): boolean => Number.isSafeInteger(n) && n >= 0;

/**
 * `<callKey>|<n>`, n decimal digits: the ledger keeps no call key beside the edit key (schema v5,
 * tables/edits-narrow-v5.ts), it derives it from the edit key, so that must hold for every row.
 */
export function isCallEditKey(editKey: string, callKey: string): boolean {
  const n = callKey.length + 1;
  if (editKey.length <= n || !editKey.startsWith(callKey) || editKey.charCodeAt(n - 1) !== 0x7c) return false;
  for (let i = n; i < editKey.length; i++) {
    const c = editKey.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}
// The schema's CHECKs (tables/edits-v3.ts), checked first so a bad record is reported, not thrown.
const OPERATIONS: ReadonlySet<string> = new Set(["create", "modify", "delete"]);
const DECISIONS: ReadonlySet<string> = new Set(["accepted", "rejected", "failed"]);
const SOURCES: ReadonlySet<string> = new Set(["auto", "user", "unknown"]);

export class Edits extends SeriesStore<
  EditSeriesRow,
  ReturnType<typeof prepareWrites>,
  ReturnType<typeof prepareReads>
> {
  /**
   * `version`: the ledger's schema; below EDITS_VERSION (a read-only view of an older ledger) there
   * are no edits tables, below EDIT_PACKS_VERSION `edits` is a table, not the view of the packs.
   */
  constructor(db: Database.Database, version: number) {
    super(db, version >= EDITS_VERSION, version >= SERIES_FOLDS_VERSION, "edit", prepareWrites, (d) =>
      prepareReads(d, version >= EDIT_PACKS_VERSION),
    );
  }

  /**
   * Stores new edits (ingest.ts kept only those not stored before: delivered/call-edit-sums.ts) as
   * one pack per document and tool (per the pack's columns, samePack), the packs numbered in the
   * order they were started; returns them in the order of their signal seqs, pack by pack.
   * `seqFirst`: the signal seq of the first, the others' following it (null: the observation carried
   * no signals).
   */
  insertAll(
    edits: readonly EditRecord[],
    adapter: string,
    nowMs: number,
    seqFirst: number | null,
  ): EditRecord[] {
    if (edits.length === 0) return [];
    const w = this.st.writes();
    const packs: Pack[] = [];
    const firstId = (w.nextPack.get() as { next: number }).next;
    let last: Pack | undefined;
    for (const e of edits) {
      // Mostly the same pack as the edit before; else one started before, or a new one.
      let pack = last !== undefined && samePack(last.head, e) ? last : packs.find((p) => samePack(p.head, e));
      if (pack === undefined) {
        pack = {
          id: firstId + packs.length,
          head: e,
          els: [],
          records: [],
          tsMin: e.timestampMs,
          tsMax: e.timestampMs,
        };
        packs.push(pack);
      }
      last = pack;
      pack.els.push([
        e.editKey,
        e.operation,
        e.decision,
        e.source,
        e.language,
        e.linesAdded,
        e.linesRemoved,
        e.exact ? 1 : 0,
        e.timestampMs,
        e.model,
        e.provider,
      ] satisfies PackedEdit);
      pack.records.push(e);
      if (e.timestampMs < pack.tsMin) pack.tsMin = e.timestampMs;
      if (e.timestampMs > pack.tsMax) pack.tsMax = e.timestampMs;
    }
    const added: EditRecord[] = [];
    for (const p of packs) {
      writePack(w.pack, p, adapter, nowMs, seqFirst === null ? null : seqFirst + added.length);
      added.push(...p.records);
    }
    return added;
  }

  /**
   * The end of a delta window after pack id `after`: whole packs holding at most `maxEdits` edits
   * (at least one pack, whatever it holds), so a window's series stay as few as before the packs.
   */
  windowEnd(after: number, maxEdits: number): number {
    const r = this.st.reads();
    if (r === undefined) return after;
    if (r.windowEnd === undefined) return Math.min(this.maxId(), after + maxEdits);
    return (r.windowEnd.get({ after, edits: maxEdits }) as { upTo: number }).upTo;
  }
}

/** One pack's element: an edit's own values, in EDIT_FIELDS' order (tables/edit-packs-v6.ts). */
type PackedEdit = [
  key: string,
  operation: string,
  decision: string,
  source: string,
  language: string,
  linesAdded: number,
  linesRemoved: number,
  exact: 0 | 1,
  timestampMs: number,
  model: string,
  provider: string,
];

/** A pack being gathered: its id, the edit whose pack columns it has, its elements (and records) and time span. */
interface Pack {
  readonly id: number;
  readonly head: EditRecord;
  readonly els: PackedEdit[];
  readonly records: EditRecord[];
  tsMin: number;
  tsMax: number;
}

/** Whether an edit has the pack columns of `head` (what a pack row holds once for all its edits). */
function samePack(head: EditRecord, e: EditRecord): boolean {
  return (
    e.sessionId === head.sessionId &&
    e.agent === head.agent &&
    e.toolName === head.toolName &&
    e.project === head.project &&
    (e.client ?? "") === (head.client ?? "") &&
    e.sourcePath === head.sourcePath
  );
}

function writePack(
  insert: Database.Statement,
  p: Pack,
  adapter: string,
  nowMs: number,
  seqFirst: number | null,
): void {
  const h = p.head;
  let acceptedAdded = 0;
  let acceptedRemoved = 0;
  let accepted = 0;
  let rejected = 0;
  for (const el of p.els) {
    if (el[2] === "accepted") {
      accepted++;
      acceptedAdded += el[5];
      acceptedRemoved += el[6];
    } else if (el[2] === "rejected") rejected++;
  }
  insert.run(
    p.id,
    adapter,
    h.sessionId,
    h.agent,
    h.toolName,
    h.project,
    h.client ?? "",
    h.sourcePath,
    nowMs,
    p.tsMin,
    p.tsMax,
    seqFirst,
    seqFirst === null ? null : seqFirst + p.els.length - 1,
    p.els.length,
    JSON.stringify(p.els),
    acceptedAdded,
    acceptedRemoved,
    accepted,
    rejected,
    p.els.length - accepted - rejected,
  );
}

function prepareWrites(db: Database.Database) {
  return {
    nextPack: db.prepare("SELECT IFNULL(MAX(id), 0) + 1 AS next FROM edit_packs"),
    pack: db.prepare(
      `INSERT INTO edit_packs (id, adapter, session_id, agent, tool_name, project, client, source_path, ingested_ms,
         ts_min, ts_max, seq_first, seq_last, n, edits, accepted_added, accepted_removed, accepted, rejected, failed)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    fold: db.prepare(foldSql("edit_series", EDIT_SERIES_KEY, SUM_COLUMNS, DELTA)),
  };
}

function prepareReads(db: Database.Database, packed: boolean) {
  const live = "(last_event_ms >= @eventSince OR updated_ms >= @updatedSince)";
  return {
    all: db.prepare(`SELECT ${COLS} FROM edit_series ORDER BY id`),
    live: db.prepare(`SELECT ${COLS} FROM edit_series WHERE ${live} ORDER BY id`),
    // id first: the rowid range is the scan, the TTL a filter on it.
    page: db.prepare(
      `SELECT id, ${COLS} FROM edit_series WHERE id > @afterId AND ${live} ORDER BY id LIMIT @limit`,
    ),
    delta: db.prepare(DELTA),
    ...idReads(db, "edits"),
    // A delta window is of pack ids (the view's `id`): the highest from the table, not the view.
    ...(packed
      ? {
          maxId: db.prepare("SELECT IFNULL(MAX(id), 0) AS max FROM edit_packs"),
          // The packs after `after` while their running count of edits stays within @edits, the first always.
          windowEnd: db.prepare(
            `SELECT IFNULL(MAX(id), @after) AS upTo FROM (
               SELECT id, SUM(n) OVER (ORDER BY id) AS c, ROW_NUMBER() OVER (ORDER BY id) AS r
               FROM (SELECT id, n FROM edit_packs WHERE id > @after ORDER BY id LIMIT @edits))
             WHERE r = 1 OR c <= @edits`,
          ),
        }
      : { windowEnd: undefined }),
  };
}
