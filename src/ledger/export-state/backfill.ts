import type Database from "better-sqlite3";
import type { FoldCursor } from "../usage/fold.ts";
import { type ExportState, type StateRow, stateFromRow, stateParams } from "./state.ts";

/** Where a keyset read over the series stands: the phase and the last series id read in it. */
export type BackfillPhase = "usage" | "tool" | "outcome" | "edit" | "activity" | "genai" | "done";

/**
 * A cumulative export in pages that a backend acknowledged in part: the export state the
 * collection that began it read (committed once the last page is delivered; its `lastSuccessMs`
 * is the time the pass began) and the position after the last acknowledged page.
 */
export interface BackfillProgress {
  readonly exporter: string;
  /** The translate options its series were built with: a pass under other options starts over. */
  readonly options: string;
  readonly state: ExportState;
  readonly phase: BackfillPhase;
  readonly afterId: number;
  /** A pass over folded series: the last acknowledged group key (src/ledger/usage/fold.ts) instead of an id. */
  readonly afterKey?: FoldCursor | undefined;
  /** Usage and tool series acknowledged so far, and how many the pass began with (progress). */
  readonly delivered: number;
  readonly total: number;
}

type Row = StateRow & {
  options: string;
  phase: BackfillPhase;
  after_id: number;
  after_key: string | null;
  delivered: number;
  total: number;
};

/** The `export_backfill` table (tables/state.ts): at most one row per exporter, written after each acknowledged page. */
export class ExportBackfills {
  private readonly st: { get: Database.Statement; put: Database.Statement; drop: Database.Statement };

  constructor(db: Database.Database) {
    this.st = {
      get: db.prepare(
        `SELECT options, event_watermark, call_watermark, capture_watermark, compaction_watermark,
           final_call_watermark, edit_watermark, activity_watermark, window_start_ns, started_ms AS last_success_ms, phase,
           after_id, after_key, delivered, total
         FROM export_backfill WHERE exporter = @exporter`,
      ),
      put: db.prepare(
        `INSERT INTO export_backfill (exporter, options, started_ms, event_watermark, call_watermark,
           capture_watermark, compaction_watermark, final_call_watermark, edit_watermark, activity_watermark,
           window_start_ns, phase, after_id, after_key, delivered, total)
         VALUES (@exporter, @options, @lastSuccessMs, @eventWatermark, @callWatermark, @captureWatermark,
           @compactionWatermark, @finalCallWatermark, @editWatermark, @activityWatermark, @windowStartNs, @phase,
           @afterId, @afterKey, @delivered, @total)
         ON CONFLICT (exporter) DO UPDATE SET options = excluded.options, started_ms = excluded.started_ms,
           event_watermark = excluded.event_watermark, call_watermark = excluded.call_watermark,
           capture_watermark = excluded.capture_watermark, compaction_watermark = excluded.compaction_watermark,
           final_call_watermark = excluded.final_call_watermark, edit_watermark = excluded.edit_watermark,
           activity_watermark = excluded.activity_watermark, window_start_ns = excluded.window_start_ns,
           phase = excluded.phase, after_id = excluded.after_id, after_key = excluded.after_key, delivered = excluded.delivered,
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
      state: stateFromRow(exporter, r),
      phase: r.phase,
      afterId: r.after_id,
      ...(r.after_key === null ? {} : { afterKey: JSON.parse(r.after_key) as FoldCursor }),
      delivered: r.delivered,
      total: r.total,
    };
  }

  put(p: BackfillProgress): void {
    this.st.put.run({
      ...stateParams({ ...p.state, exporter: p.exporter }),
      options: p.options,
      phase: p.phase,
      afterId: p.afterId,
      afterKey: p.afterKey === undefined ? null : JSON.stringify(p.afterKey),
      delivered: p.delivered,
      total: p.total,
    });
  }

  /** The pass is complete (or void): the next export is a whole one again. */
  drop(exporter: string): void {
    this.st.drop.run({ exporter });
  }
}
