import type Database from "better-sqlite3";
import type { KnownCheckpoints, SourceCheckpoint } from "../adapter/types.ts";
import { CAPTURES_VERSION, type CaptureRow, type CaptureSeriesRow, Captures } from "./captures/captures.ts";
import { Checkpoints, type PathOf } from "./collection/checkpoints.ts";
import { Listings } from "./collection/listings.ts";
import { Activity, type ActivitySeriesRow } from "./delivered/activity.ts";
import { EDIT_PACKS_VERSION, type EditSeriesRow, Edits } from "./delivered/edits.ts";
import { ExportBackfills } from "./export-state/backfill.ts";
import { type ExportState, ExportStates } from "./export-state/state.ts";
import { LedgerError, type OpenOptions, openLedgerDb, type WriterLock } from "./open.ts";
import { DELIVERED_ROLLUP_VERSION, ReportQueries, ROLLUP_VERSION } from "./rollups/report-queries.ts";
import { Signals } from "./signals/signals.ts";
import {
  COMPACTIONS_VERSION,
  type CompactionRow,
  type CompactionSeriesRow,
  Compactions,
} from "./usage/compactions.ts";
import { SeriesFolds } from "./usage/fold.ts";
import { type CommitResult, Ingest, type ReadObservation } from "./usage/ingest.ts";
import {
  type IdWindow,
  type LiveFilter,
  type SeriesPage,
  SeriesReads,
  type ToolSeriesRow,
  type UsageSeriesRow,
} from "./usage/series.ts";

export type { CaptureRow, CaptureSeriesRow } from "./captures/captures.ts";
export type { PathOf } from "./collection/checkpoints.ts";
export type { ActivitySeriesRow } from "./delivered/activity.ts";
export type { EditSeriesRow } from "./delivered/edits.ts";
export type { BackfillPhase, BackfillProgress } from "./export-state/backfill.ts";
export type { ExportState } from "./export-state/state.ts";
export { LEDGER_FILE, LedgerError, readHolderPid } from "./open.ts";
export type { SignalBatch, SignalCursor, SignalKind, SignalRow } from "./signals/signals.ts";
export type { CompactionRow, CompactionSeriesRow } from "./usage/compactions.ts";
export type { FoldCursor, Folded, FoldKey, FoldPage, TableFold } from "./usage/fold.ts";
export type { CommitResult, ReadObservation } from "./usage/ingest.ts";
export type { IdWindow, LiveFilter, SeriesPage, ToolSeriesRow, UsageSeriesRow } from "./usage/series.ts";

export interface LedgerOptions extends OpenOptions {
  /**
   * The quiet time (CLINE_OTEL_QUIET_TIME): a document already quiet when a commit reads it has
   * its calls without a result and its lead turns final at once, by finalizeQuiet's rule
   * (Signals.record). Absent: they stay open until a sweep finalizes them.
   */
  readonly quietMs?: number;
}

/**
 * The local SQLite ledger: deduplicated events, tool calls, captures, checkpoints and export
 * state. This class owns the lifecycle (open, migrate, lock, close) and hands each concern to
 * its own module: ingest.ts writes, series.ts and captures.ts read for the exporters,
 * checkpoints.ts and export-state.ts keep the two kinds of progress, report-queries.ts serves
 * `report`. Single writer per state dir (an OS lock that dies with the process), WAL,
 * statements prepared once, and the rows of one source commit together with its checkpoint.
 */
export class Ledger {
  readonly path: string;
  readonly instanceId: string;
  readonly streamStartNs: bigint;
  /** Whether this open ran `PRAGMA quick_check` (after an unclean shutdown, or on request). */
  readonly integrityChecked: boolean;
  private readonly db: Database.Database;
  private readonly lock: WriterLock | undefined;
  private readonly checkpoints: Checkpoints;
  private readonly series: SeriesReads;
  private readonly captures: Captures;
  private readonly exportStates: ExportStates;
  private readonly ingest: Ingest | undefined;
  /** The events and traces queue and their delivery state (a writer only). */
  readonly signals: Signals | undefined;
  private readonly compactions: Compactions;
  /** The file edits and their series (absent tables on a read-only view of a v2 ledger: none). */
  readonly edits: Edits;
  /** Active time, commits, pull requests and session starts, and their series (none on a v2 view). */
  readonly activity: Activity;
  /** Persisted directory listings, the adapters' discovery cache (a writer only). */
  readonly listings: Listings | undefined;
  /** What backends acknowledged of cumulative exports in pages (a writer only; src/export). */
  readonly backfills: ExportBackfills | undefined;
  /** The series folded in SQL, in keyset pages (a cumulative export whose series collapse). */
  readonly folds: SeriesFolds;
  private reportQueries: ReportQueries | undefined;
  /** The schema version of the ledger as opened (a writer's is always this build's). */
  private readonly version: number;

  private constructor(
    opened: ReturnType<typeof openLedgerDb>,
    now: () => number,
    quietMs: number | undefined,
  ) {
    const { db, version } = opened;
    this.path = opened.path;
    this.db = db;
    this.lock = opened.lock;
    this.integrityChecked = opened.checked;
    this.version = version;
    const meta = new Map(
      (db.prepare("SELECT key, value FROM meta").all() as { key: string; value: string }[]).map((r) => [
        r.key,
        r.value,
      ]),
    );
    this.instanceId = meta.get("instance_id") ?? "";
    this.streamStartNs = BigInt(meta.get("stream_start_ns") ?? "0");
    // A writer holds the checkpoints between passes: only its own commits change them.
    this.checkpoints = new Checkpoints(db, opened.lock !== undefined);
    this.series = new SeriesReads(db, version);
    this.folds = new SeriesFolds(db);
    this.captures = new Captures(db, version);
    this.compactions = new Compactions(db, version);
    this.edits = new Edits(db, version);
    this.activity = new Activity(db, version);
    this.exportStates = new ExportStates(
      db,
      this.streamStartNs,
      version >= CAPTURES_VERSION,
      version >= COMPACTIONS_VERSION,
    );
    // Only a writer ingests, and a writer is always at this build's schema.
    this.signals = opened.lock ? new Signals(db, quietMs) : undefined;
    this.listings = opened.lock ? new Listings(db) : undefined;
    this.backfills = opened.lock ? new ExportBackfills(db) : undefined;
    this.ingest = opened.lock
      ? new Ingest(
          db,
          this.checkpoints,
          this.captures,
          now,
          this.signals,
          this.compactions,
          this.edits,
          this.activity,
        )
      : undefined;
  }

  /** Open (creating and migrating if needed) the ledger in `stateDir`. Throws LedgerError with a fix. */
  static open(stateDir: string, opts: LedgerOptions = {}): Ledger {
    const opened = openLedgerDb(stateDir, opts);
    try {
      return new Ledger(opened, opts.now ?? Date.now, opts.quietMs);
    } catch (e) {
      opened.db.close();
      opened.lock?.release(false);
      throw e;
    }
  }

  /** Runs `fn` in one transaction (nested calls become savepoints): all of its writes or none. */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  /** Closes the ledger; a writer's clean close means no integrity check at the next open. */
  close(): void {
    const wasOpen = this.db.open;
    if (wasOpen) this.db.close();
    this.lock?.release(wasOpen);
  }

  // ---- ingest

  /** Events, tool calls, captures and the source's new checkpoint, in one transaction. */
  commit(obs: ReadObservation): CommitResult {
    if (this.ingest === undefined)
      throw new LedgerError(`the ledger ${this.path} is open read-only; nothing can be committed`, "io");
    return this.ingest.commit(obs);
  }

  /** Several sources in one transaction, each as commit() would store it; all or none. */
  commitAll(obs: readonly ReadObservation[]): CommitResult[] {
    if (this.ingest === undefined)
      throw new LedgerError(`the ledger ${this.path} is open read-only; nothing can be committed`, "io");
    return this.ingest.commitAll(obs);
  }

  // ---- checkpoints

  /** Every checkpoint in one query: a pass over thousands of sources looks them up in memory. */
  allCheckpoints(pathOf?: PathOf): ReadonlyMap<string, SourceCheckpoint> {
    return this.checkpoints.all(pathOf);
  }

  /**
   * The checkpoints as a pass hands them to discovery (KnownCheckpoints): `all()` loaded on its
   * first call and kept by this object, `token` read from the table each time.
   */
  knownCheckpoints(pathOf?: PathOf): KnownCheckpoints {
    let all: ReadonlyMap<string, SourceCheckpoint> | undefined;
    return {
      all: () => {
        all ??= this.checkpoints.all(pathOf);
        return all;
      },
      token: (adapter) => this.checkpoints.token(adapter),
    };
  }

  getCheckpoint(path: string): SourceCheckpoint | undefined {
    return this.checkpoints.get(path);
  }

  /**
   * Drops the checkpoints of `adapter` for files that are gone: not in `live` and not under a
   * dir in `keepUnder` (dirs that could not be listed, whose files may still exist).
   */
  pruneCheckpoints(adapter: string, live: ReadonlySet<string>, keepUnder: readonly string[]): number {
    // Found by reading (the held paths, at an idle sweep), deleted in a transaction only if any.
    const gone = this.checkpoints.gone(adapter, live, keepUnder);
    if (gone.length === 0) return 0;
    return this.transaction(() => this.checkpoints.delete(adapter, gone));
  }

  // ---- series (what the exporters read)

  /**
   * Sums the edits and activity records not summed yet into their series (schema v7: a commit writes
   * the records alone), exactly once, in one transaction; returns the ids folded. A cumulative export
   * calls it before it reads any series (the stores' own reads fold too).
   */
  foldSeries(): number {
    return this.transaction(() => this.edits.fold() + this.activity.fold());
  }

  usageSeries(): UsageSeriesRow[] {
    return this.series.usageSeries();
  }

  /** Cumulative export: the series the TTL keeps, filtered in SQL, one row at a time. */
  liveUsageSeries(f: LiveFilter): IterableIterator<UsageSeriesRow> {
    return this.series.liveUsageSeries(f);
  }

  liveToolSeries(f: LiveFilter): IterableIterator<ToolSeriesRow> {
    return this.series.liveToolSeries(f);
  }

  /** One keyset page of liveUsageSeries (rows with their ids; see SeriesReads.liveUsagePage). */
  liveUsagePage(f: LiveFilter, page: SeriesPage): IterableIterator<UsageSeriesRow & { readonly id: number }> {
    return this.series.liveUsagePage(f, page);
  }

  liveToolPage(f: LiveFilter, page: SeriesPage): IterableIterator<ToolSeriesRow & { readonly id: number }> {
    return this.series.liveToolPage(f, page);
  }

  /** How many usage and tool series the cumulative TTL keeps (a paged export's progress). */
  liveSeriesCount(f: LiveFilter): number {
    return this.series.liveCount(f);
  }

  toolSeries(): ToolSeriesRow[] {
    return this.series.toolSeries();
  }

  /** Usage aggregated per series over events with after < id <= upTo (delta export). */
  usageDelta(after: number, upTo: number): UsageSeriesRow[] {
    return this.series.usageDelta({ after, upTo });
  }

  /** Tool calls of a call window plus the upgrades the events of an event window made (delta export). */
  toolDelta(calls: IdWindow, events: IdWindow): ToolSeriesRow[] {
    return this.series.toolDelta(calls, events);
  }

  /** Highest event and call ids: the delta exporter's next watermark candidates. */
  maxIds(): { event: number; call: number } {
    return this.series.maxIds();
  }

  /** Events of the ledger in ingestion order (tests, audits, cost verification). */
  iterateEvents(): IterableIterator<Record<string, unknown>> {
    return this.series.iterateEvents();
  }

  counts(): { events: number; calls: number; sources: number } {
    return this.series.counts();
  }

  // ---- captures

  /** False only for a read-only view of a ledger older than CAPTURES_VERSION (none yet: the baseline has them). */
  hasCaptures(): boolean {
    return this.captures.present;
  }

  /** Every capture series with its running totals and histogram buckets (cumulative export). */
  captureSeries(): CaptureSeriesRow[] {
    return this.captures.series();
  }

  /** Capture series aggregated over captures with after < id <= upTo (delta export). */
  captureDelta(after: number, upTo: number): CaptureSeriesRow[] {
    return this.captures.delta({ after, upTo });
  }

  /** Highest capture id: a delta exporter's next capture watermark candidate. */
  maxCaptureId(): number {
    return this.captures.maxId();
  }

  /** Capture rows for `report --captures`, in session / agent / run / iteration order. */
  captureRows(sessionId?: string): CaptureRow[] {
    return this.captures.rows(sessionId);
  }

  // ---- compactions

  /** Every observed-compaction series with its count (cumulative export of cline.compactions). */
  compactionSeries(): CompactionSeriesRow[] {
    return this.compactions.series();
  }

  /** Compaction series over compactions with after < id <= upTo (delta export). */
  compactionDelta(after: number, upTo: number): CompactionSeriesRow[] {
    return this.compactions.delta({ after, upTo });
  }

  /** Highest compaction id: a delta exporter's next compaction watermark candidate. */
  maxCompactionId(): number {
    return this.compactions.maxId();
  }

  /** The observed compactions in time order. */
  compactionRows(): CompactionRow[] {
    return this.compactions.rows();
  }

  // ---- edits

  /** Edit series aggregated over the edits with after < id <= upTo (delta export). */
  editDelta(after: number, upTo: number): EditSeriesRow[] {
    return this.edits.delta({ after, upTo });
  }

  /** Where a delta window of at most `maxEdits` edits after `after` ends (an edit id: its pack's). */
  editWindowEnd(after: number, maxEdits: number): number {
    return this.edits.windowEnd(after, maxEdits);
  }

  /** Highest edit id: a delta exporter's next edit watermark candidate. */
  maxEditId(): number {
    return this.edits.maxId();
  }

  // ---- activity

  /** Activity series aggregated over the records with after < id <= upTo (delta export). */
  activityDelta(after: number, upTo: number): ActivitySeriesRow[] {
    return this.activity.delta({ after, upTo });
  }

  /** Highest activity id: a delta exporter's next activity watermark candidate. */
  maxActivityId(): number {
    return this.activity.maxId();
  }

  // ---- export state

  /** What `exporter` has delivered (all watermarks zero and the stream start when nothing yet). */
  getExportState(exporter: string): ExportState {
    return this.exportStates.get(exporter);
  }

  putExportState(s: ExportState): void {
    this.exportStates.put(s);
  }

  /** Whether the connection is still open (an abandoned export must not write after close). */
  get isOpen(): boolean {
    return this.db.open;
  }

  // ---- report

  /** The grouped totals `report` prints (prepared on first use, then kept). */
  get report(): ReportQueries {
    this.reportQueries ??= new ReportQueries(
      this.db,
      this.version >= ROLLUP_VERSION,
      this.version >= DELIVERED_ROLLUP_VERSION,
      this.version >= EDIT_PACKS_VERSION,
    );
    return this.reportQueries;
  }
}
