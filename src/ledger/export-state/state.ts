import type Database from "better-sqlite3";

/** What one exporter has delivered: its delta watermarks and when anything last got through. */
export interface ExportState {
  readonly exporter: string;
  /** Highest event id delivered (delta). */
  readonly eventWatermark: number;
  /** Highest tool-call id delivered (delta). */
  readonly callWatermark: number;
  /** Highest capture id delivered (delta; 0 for a ledger from before captures). */
  readonly captureWatermark: number;
  /** Highest compaction id delivered (delta; absent = 0, e.g. a ledger from before compactions). */
  readonly compactionWatermark?: number;
  /**
   * Highest signal_queue seq whose final tool calls were delivered (delta `cline.tool.calls` by
   * outcome and `cline.tool.duration`; absent = 0, e.g. a ledger from before outcomes).
   */
  readonly finalCallWatermark?: number;
  /** Highest edit id delivered (delta; absent = 0, e.g. a ledger from before edits, schema v3). */
  readonly editWatermark?: number;
  /** Highest activity id delivered (delta; absent = 0: a ledger from before activity, schema v3). */
  readonly activityWatermark?: number;
  /** Start of the next delta window (the end of the last delivered one). */
  readonly windowStartNs: bigint;
  /** Ledger read time of the last delivered export: every change older than it was in it. */
  readonly lastSuccessMs: number;
}

/** An export state's columns as SQLite returns them (also the export_backfill's pending state). */
export interface StateRow {
  event_watermark: number;
  call_watermark: number;
  capture_watermark: number;
  compaction_watermark: number;
  final_call_watermark: number;
  edit_watermark: number;
  /** Absent where a statement does not select it (export_backfill keeps no activity watermark). */
  activity_watermark?: number;
  window_start_ns: string;
  last_success_ms: number;
}

/** The `export_state` table: one row per exporter, all of its watermarks moving together. */
export class ExportStates {
  private readonly get_: Database.Statement;
  private put_: Database.Statement | undefined;

  /** `hasCaptureWatermark`: false only for a read-only view of a v1 ledger. */
  constructor(
    private readonly db: Database.Database,
    private readonly streamStartNs: bigint,
    hasCaptureWatermark: boolean,
    hasCompactionWatermark = false,
  ) {
    // A read-only view of a ledger from before tool outcomes has no such column (nothing exports from it).
    const hasFinalCallWatermark =
      db
        .prepare("SELECT 1 FROM pragma_table_info('export_state') WHERE name = 'final_call_watermark'")
        .get() !== undefined;
    // A read-only view of a ledger from before edits (v2) has none either.
    const hasEditWatermark =
      db.prepare("SELECT 1 FROM pragma_table_info('export_state') WHERE name = 'edit_watermark'").get() !==
      undefined;
    const hasActivityWatermark =
      db
        .prepare("SELECT 1 FROM pragma_table_info('export_state') WHERE name = 'activity_watermark'")
        .get() !== undefined;
    this.get_ = db.prepare(
      `SELECT event_watermark, call_watermark, ${hasCaptureWatermark ? "capture_watermark" : "0 AS capture_watermark"},
         ${hasCompactionWatermark ? "compaction_watermark" : "0 AS compaction_watermark"},
         ${hasFinalCallWatermark ? "final_call_watermark" : "0 AS final_call_watermark"},
         ${hasEditWatermark ? "edit_watermark" : "0 AS edit_watermark"},
         ${hasActivityWatermark ? "activity_watermark" : "0 AS activity_watermark"},
         window_start_ns, last_success_ms
       FROM export_state WHERE exporter = @exporter`,
    );
  }

  get(exporter: string): ExportState {
    const r = this.get_.get({ exporter }) as StateRow | undefined;
    if (r === undefined) {
      return {
        exporter,
        eventWatermark: 0,
        callWatermark: 0,
        captureWatermark: 0,
        compactionWatermark: 0,
        finalCallWatermark: 0,
        editWatermark: 0,
        activityWatermark: 0,
        windowStartNs: this.streamStartNs,
        lastSuccessMs: 0,
      };
    }
    return stateFromRow(exporter, r);
  }

  put(s: ExportState): void {
    // Prepared on first use: only a writable ledger (always at this build's schema) writes.
    this.put_ ??= this.db.prepare(
      `INSERT INTO export_state (exporter, event_watermark, call_watermark, capture_watermark,
         compaction_watermark, final_call_watermark, edit_watermark, activity_watermark, window_start_ns,
         last_success_ms)
       VALUES (@exporter, @eventWatermark, @callWatermark, @captureWatermark, @compactionWatermark,
         @finalCallWatermark, @editWatermark, @activityWatermark, @windowStartNs, @lastSuccessMs)
       ON CONFLICT (exporter) DO UPDATE SET event_watermark = excluded.event_watermark,
         call_watermark = excluded.call_watermark, capture_watermark = excluded.capture_watermark,
         compaction_watermark = excluded.compaction_watermark,
         final_call_watermark = excluded.final_call_watermark, edit_watermark = excluded.edit_watermark,
         activity_watermark = excluded.activity_watermark, window_start_ns = excluded.window_start_ns, last_success_ms = excluded.last_success_ms`,
    );
    this.put_.run(stateParams(s));
  }
}

export function stateFromRow(exporter: string, r: StateRow): ExportState {
  return {
    exporter,
    eventWatermark: r.event_watermark,
    callWatermark: r.call_watermark,
    captureWatermark: r.capture_watermark,
    compactionWatermark: r.compaction_watermark,
    finalCallWatermark: r.final_call_watermark,
    editWatermark: r.edit_watermark,
    activityWatermark: r.activity_watermark ?? 0,
    windowStartNs: BigInt(r.window_start_ns),
    lastSuccessMs: r.last_success_ms,
  };
}

/** An export state as the named parameters of a statement that writes it. */
export function stateParams(s: ExportState) {
  return {
    exporter: s.exporter,
    eventWatermark: s.eventWatermark,
    callWatermark: s.callWatermark,
    captureWatermark: s.captureWatermark,
    compactionWatermark: s.compactionWatermark ?? 0,
    finalCallWatermark: s.finalCallWatermark ?? 0,
    editWatermark: s.editWatermark ?? 0,
    activityWatermark: s.activityWatermark ?? 0,
    windowStartNs: s.windowStartNs.toString(),
    lastSuccessMs: s.lastSuccessMs,
  };
}
