/**
 * File edits (issue 29; tables in tables/edits-v3.ts): each EditRecord an adapter read is stored
 * exactly once by its edit key, in the commit transaction of its document, and added to its
 * running series (`edit_series`) by the same commit, one upsert per series. The exporters read
 * those series (cumulative: live rows, in pages, or folded in SQL by src/ledger/fold.ts) or the
 * edits of one id window aggregated per series (delta: export_state.edit_watermark). Generic: the
 * ledger knows the normalized record, no format.
 */
import type Database from "better-sqlite3";
import type { EditRecord } from "../adapter/types.ts";
import type { IdWindow, LiveFilter, SeriesPage } from "./series.ts";

/** Schema version that added the edits (tables/edits-v3.ts). */
export const EDITS_VERSION = 3;

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
/** The series totals of a set of edits rows (delta). */
const SUMS = `COUNT(*) AS edits, SUM(lines_added) AS linesAdded, SUM(lines_removed) AS linesRemoved,
  SUM(1 - exact) AS inexactEdits, SUM(lines_added * (1 - exact)) AS inexactLinesAdded,
  SUM(lines_removed * (1 - exact)) AS inexactLinesRemoved, MIN(ingested_ms) AS firstMs,
  MAX(ingested_ms) AS updatedMs, MAX(ts_ms) AS lastEventMs`;

const clamp = (ms: number): number => (Number.isFinite(ms) ? Math.trunc(ms) : Number.MIN_SAFE_INTEGER);
const liveParams = (f: LiveFilter) => ({
  eventSince: clamp(f.eventSinceMs),
  updatedSince: clamp(f.updatedSinceMs),
});

/** One series' sums over the edits a commit adds. */
interface Sum {
  readonly key: Record<string, string>;
  edits: number;
  linesAdded: number;
  linesRemoved: number;
  inexactEdits: number;
  inexactLinesAdded: number;
  inexactLinesRemoved: number;
  lastEventMs: number;
}

/** Per-commit sums by series: one upsert per distinct series, not one per edit. */
export class EditSums {
  private readonly sums = new Map<string, Sum>();

  add(e: EditRecord): void {
    const key = {
      sessionId: e.sessionId,
      agent: e.agent,
      project: e.project,
      model: e.model,
      provider: e.provider,
      client: e.client ?? "",
      toolName: e.toolName,
      operation: e.operation,
      decision: e.decision,
      source: e.source,
      language: e.language,
    };
    const id = Object.values(key).join("\u0000");
    let s = this.sums.get(id);
    if (s === undefined) {
      s = {
        key,
        edits: 0,
        linesAdded: 0,
        linesRemoved: 0,
        inexactEdits: 0,
        inexactLinesAdded: 0,
        inexactLinesRemoved: 0,
        lastEventMs: Number.NEGATIVE_INFINITY,
      };
      this.sums.set(id, s);
    }
    s.edits++;
    s.linesAdded += e.linesAdded;
    s.linesRemoved += e.linesRemoved;
    if (!e.exact) {
      s.inexactEdits++;
      s.inexactLinesAdded += e.linesAdded;
      s.inexactLinesRemoved += e.linesRemoved;
    }
    if (e.timestampMs > s.lastEventMs) s.lastEventMs = e.timestampMs;
  }

  values(): IterableIterator<Sum> {
    return this.sums.values();
  }
}

/** A count of lines must be a non-negative integer: anything else is the adapter's bug, refused loudly. */
function lines(n: number, what: string, key: string): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`edit ${key}: ${what} is not a line count: ${n}`);
  return n;
}

export class Edits {
  private w: ReturnType<typeof prepareWrites> | undefined;
  private r: ReturnType<typeof prepareReads> | undefined;

  /** `present`: false on a read-only view of a ledger older than EDITS_VERSION (no edits tables). */
  constructor(
    private readonly db: Database.Database,
    readonly present: boolean,
  ) {}

  private writes(): ReturnType<typeof prepareWrites> {
    this.w ??= prepareWrites(this.db);
    return this.w;
  }

  private reads(): ReturnType<typeof prepareReads> | undefined {
    if (!this.present) return undefined;
    this.r ??= prepareReads(this.db);
    return this.r;
  }

  /**
   * Stores one edit once (its key); true when this INSERT inserted it, and then `sums` gets it.
   * `signalSeq`: its place in the signal order (null: its observation carried no signals).
   */
  insert(e: EditRecord, adapter: string, nowMs: number, signalSeq: number | null, sums: EditSums): boolean {
    const info = this.writes().insert.run({
      editKey: e.editKey,
      callKey: e.callKey,
      usageKey: e.usageKey,
      adapter,
      sessionId: e.sessionId,
      agent: e.agent,
      toolName: e.toolName,
      operation: e.operation,
      decision: e.decision,
      source: e.source,
      language: e.language,
      linesAdded: lines(e.linesAdded, "linesAdded", e.editKey),
      linesRemoved: lines(e.linesRemoved, "linesRemoved", e.editKey),
      exact: e.exact ? 1 : 0,
      tsMs: e.timestampMs,
      model: e.model,
      provider: e.provider,
      project: e.project,
      client: e.client ?? "",
      sourcePath: e.sourcePath,
      nowMs,
      signalSeq,
    });
    if (info.changes === 0) return false;
    sums.add(e);
    return true;
  }

  /** Writes a commit's series sums (inside its transaction, after its inserts). */
  flush(sums: EditSums, nowMs: number): void {
    const st = this.writes().series;
    for (const s of sums.values())
      st.run({
        ...s.key,
        edits: s.edits,
        linesAdded: s.linesAdded,
        linesRemoved: s.linesRemoved,
        inexactEdits: s.inexactEdits,
        inexactLinesAdded: s.inexactLinesAdded,
        inexactLinesRemoved: s.inexactLinesRemoved,
        nowMs,
        lastEventMs: s.lastEventMs,
      });
  }

  /** Every series (tests, audits). */
  series(): EditSeriesRow[] {
    return (this.reads()?.all.all() ?? []) as EditSeriesRow[];
  }

  /** The series the cumulative TTL keeps, one row at a time. */
  *live(f: LiveFilter): IterableIterator<EditSeriesRow> {
    const r = this.reads();
    if (r !== undefined) yield* r.live.iterate(liveParams(f)) as IterableIterator<EditSeriesRow>;
  }

  /** One keyset page of `live`: rows with id > afterId, at most limit, each with its id. */
  *livePage(f: LiveFilter, page: SeriesPage): IterableIterator<EditSeriesRow & { readonly id: number }> {
    const r = this.reads();
    if (r !== undefined)
      yield* r.page.iterate({ ...liveParams(f), ...page }) as IterableIterator<
        EditSeriesRow & { id: number }
      >;
  }

  /** The edits of one id window aggregated per series (delta). */
  delta(w: IdWindow): EditSeriesRow[] {
    return (this.reads()?.delta.all(w) ?? []) as EditSeriesRow[];
  }

  /** The highest edit id (0: none): a delta exporter's next watermark candidate. */
  maxId(): number {
    return (this.reads()?.maxId.get() as { max: number } | undefined)?.max ?? 0;
  }

  /** Edits and counts by row (tests, audits). */
  rows(): Record<string, unknown>[] {
    return (this.reads()?.rows.all() ?? []) as Record<string, unknown>[];
  }
}

function prepareWrites(db: Database.Database) {
  return {
    insert: db.prepare(
      `INSERT INTO edits (edit_key, call_key, usage_key, adapter, session_id, agent, tool_name, operation, decision,
         source, language, lines_added, lines_removed, exact, ts_ms, model, provider, project, client, source_path,
         ingested_ms, signal_seq)
       VALUES (@editKey, @callKey, @usageKey, @adapter, @sessionId, @agent, @toolName, @operation, @decision,
         @source, @language, @linesAdded, @linesRemoved, @exact, @tsMs, @model, @provider, @project, @client,
         @sourcePath, @nowMs, @signalSeq)
       ON CONFLICT (edit_key) DO NOTHING`,
    ),
    series: db.prepare(
      `INSERT INTO edit_series (${KEY}, edits, lines_added, lines_removed, inexact_edits, inexact_lines_added,
         inexact_lines_removed, first_ms, updated_ms, last_event_ms)
       VALUES (@sessionId, @agent, @project, @model, @provider, @client, @toolName, @operation, @decision, @source,
         @language, @edits, @linesAdded, @linesRemoved, @inexactEdits, @inexactLinesAdded, @inexactLinesRemoved,
         @nowMs, @nowMs, @lastEventMs)
       ON CONFLICT (${KEY}) DO UPDATE SET edits = edits + excluded.edits,
         lines_added = lines_added + excluded.lines_added, lines_removed = lines_removed + excluded.lines_removed,
         inexact_edits = inexact_edits + excluded.inexact_edits,
         inexact_lines_added = inexact_lines_added + excluded.inexact_lines_added,
         inexact_lines_removed = inexact_lines_removed + excluded.inexact_lines_removed,
         updated_ms = excluded.updated_ms, last_event_ms = max(last_event_ms, excluded.last_event_ms)`,
    ),
  };
}

function prepareReads(db: Database.Database) {
  const live = "(last_event_ms >= @eventSince OR updated_ms >= @updatedSince)";
  return {
    all: db.prepare(`SELECT ${COLS} FROM edit_series ORDER BY id`),
    live: db.prepare(`SELECT ${COLS} FROM edit_series WHERE ${live} ORDER BY id`),
    // id first: the rowid range is the scan, the TTL a filter on it.
    page: db.prepare(
      `SELECT id, ${COLS} FROM edit_series WHERE id > @afterId AND ${live} ORDER BY id LIMIT @limit`,
    ),
    delta: db.prepare(
      `SELECT session_id AS sessionId, agent, project, model, provider, client, tool_name AS toolName, operation,
         decision, source, language, ${SUMS}
       FROM edits WHERE id > @after AND id <= @upTo GROUP BY ${KEY} ORDER BY MIN(id)`,
    ),
    maxId: db.prepare("SELECT IFNULL(MAX(id), 0) AS max FROM edits"),
    rows: db.prepare("SELECT * FROM edits ORDER BY id"),
  };
}
