import type Database from "better-sqlite3";

/** Schema version from which the ledger has `export_backfill` (schema.ts v17). */
export const BACKFILL_VERSION = 17;

/** Where a keyset read over the series stands: the phase and the last series id read in it. */
export type BackfillPhase = "usage" | "tool" | "outcome" | "genai" | "done";

/**
 * A cumulative export in pages that a backend acknowledged in part: what the collection that
 * began it read (its time, and the export state to commit once the last page is delivered) and
 * the position after the last acknowledged page.
 */
export interface BackfillProgress {
  readonly exporter: string;
  /** The translate options its series were built with: a pass under other options starts over. */
  readonly options: string;
  /** Ledger read time of the collection that began the pass (its `lastSuccessMs` once complete). */
  readonly startedMs: number;
  readonly eventWatermark: number;
  readonly callWatermark: number;
  readonly captureWatermark: number;
  readonly compactionWatermark: number;
  readonly finalCallWatermark: number;
  readonly windowStartNs: bigint;
  readonly phase: BackfillPhase;
  readonly afterId: number;
  /** Usage and tool series acknowledged so far, and how many the pass began with (progress). */
  readonly delivered: number;
  readonly total: number;
}

interface Row {
  options: string;
  started_ms: number;
  event_watermark: number;
  call_watermark: number;
  capture_watermark: number;
  compaction_watermark: number;
  final_call_watermark: number;
  window_start_ns: string;
  phase: BackfillPhase;
  after_id: number;
  delivered: number;
  total: number;
}

/** The `export_backfill` table: at most one row per exporter, written after each acknowledged page. */
export class ExportBackfills {
  private readonly st: { get: Database.Statement; put: Database.Statement; drop: Database.Statement };

  constructor(db: Database.Database) {
    this.st = {
      get: db.prepare(
        `SELECT options, started_ms, event_watermark, call_watermark, capture_watermark, compaction_watermark,
           final_call_watermark, window_start_ns, phase, after_id, delivered, total
         FROM export_backfill WHERE exporter = @exporter`,
      ),
      put: db.prepare(
        `INSERT INTO export_backfill (exporter, options, started_ms, event_watermark, call_watermark,
           capture_watermark, compaction_watermark, final_call_watermark, window_start_ns, phase, after_id,
           delivered, total)
         VALUES (@exporter, @options, @startedMs, @eventWatermark, @callWatermark, @captureWatermark,
           @compactionWatermark, @finalCallWatermark, @windowStartNs, @phase, @afterId, @delivered, @total)
         ON CONFLICT (exporter) DO UPDATE SET options = excluded.options, started_ms = excluded.started_ms,
           event_watermark = excluded.event_watermark, call_watermark = excluded.call_watermark,
           capture_watermark = excluded.capture_watermark, compaction_watermark = excluded.compaction_watermark,
           final_call_watermark = excluded.final_call_watermark, window_start_ns = excluded.window_start_ns,
           phase = excluded.phase, after_id = excluded.after_id, delivered = excluded.delivered,
           total = excluded.total`,
      ),
      drop: db.prepare("DELETE FROM export_backfill WHERE exporter = @exporter"),
    };
  }

  get(exporter: string): BackfillProgress | undefined {
    const r = this.st.get.get({ exporter }) as Row | undefined;
    if (r === undefined) return undefined;
    return {
      exporter,
      options: r.options,
      startedMs: r.started_ms,
      eventWatermark: r.event_watermark,
      callWatermark: r.call_watermark,
      captureWatermark: r.capture_watermark,
      compactionWatermark: r.compaction_watermark,
      finalCallWatermark: r.final_call_watermark,
      windowStartNs: BigInt(r.window_start_ns),
      phase: r.phase,
      afterId: r.after_id,
      delivered: r.delivered,
      total: r.total,
    };
  }

  put(p: BackfillProgress): void {
    this.st.put.run({ ...p, windowStartNs: p.windowStartNs.toString() });
  }

  /** The pass is complete (or void): the next export is a whole one again. */
  drop(exporter: string): void {
    this.st.drop.run({ exporter });
  }
}
