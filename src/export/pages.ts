/**
 * A cumulative export read in pages, so that its memory is one request's worth of points, not
 * every live series. Pages are keyset reads over the series ids (usage, then tool, then tool
 * outcome, then GenAI series), each one short synchronous query: no SQLite cursor is open while a page is being sent,
 * and ingestion may commit between pages.
 *
 * Exactly once is unchanged: the export state committed after the last page is the one computed
 * when the collection started (`lastSuccessMs` = that read's time). A series changed between
 * two page reads is sent with its newer total (harmless for a cumulative point), and, changed
 * after that time, is live again at the next export. A pass cut after some acknowledged pages
 * resumes after the last of them (`from`, src/export/backfill.ts). The phases: usage, tool, tool
 * outcome, edit, activity, GenAI. Where series collapse (session id
 * off, a non-injective project rendering: `fold`), the pages are keyset reads over the folded group
 * keys instead (src/ledger/usage/fold.ts): each group is summed in SQL and read whole, on one page, so
 * no attribute set is ever split across pages as partial sums.
 */
import type { MetricData } from "@opentelemetry/sdk-metrics";
import type { Temporality } from "../config/config.ts";
import type { ActivitySeriesRow } from "../ledger/delivered/activity.ts";
import type { EditSeriesRow } from "../ledger/delivered/edits.ts";
import type { BackfillPhase, FoldCursor, FoldKey, Ledger, LiveFilter } from "../ledger/ledger.ts";
import type { ToolOutcomeRow } from "../ledger/signals/tool-outcomes.ts";
import type { ToolSeriesRow, UsageSeriesRow } from "../ledger/usage/series.ts";
import { boundYoungGeneration } from "../util/heap.ts";
import { activityPointsToMetricData, translateActivity } from "./activity.ts";
import { genaiToMetricData, translateGenai } from "./genai/metrics.ts";
import { effectiveEndNs, nsToHrTime, toMetricData } from "./metric-data.ts";
import { type TranslateOptions, translate } from "./translate.ts";

/** At most this many points per usage or tool row: 4 token types + requests + cost (or unpriced). */
export const POINTS_PER_ROW = 6;
/** At most this many points per edit row: its decisions, and lines added and removed, exact and not. */
export const POINTS_PER_EDIT_ROW = 5;

export interface PageOptions {
  readonly filter: LiveFilter;
  readonly translate: TranslateOptions;
  readonly temporality: Temporality;
  readonly startNs: bigint;
  readonly endNs: bigint;
  /** Points per page (one request each); at least POINTS_PER_ROW. */
  readonly maxPoints: number;
  /** Series that collapse: read folded, by group key (src/export/fold-key.ts); undefined: by row id. */
  readonly fold?: FoldKey | undefined;
}

/** Where the next page starts: the phase and the last id (or, folded, group key) read in it. */
export interface PageCursor {
  phase: BackfillPhase;
  afterId: number;
  afterKey?: FoldCursor | undefined;
}

/**
 * The pages of one cumulative collection. `next()` reads and translates the next page (at most
 * `maxPoints` points), or returns undefined once every live series was read.
 */
export class CumulativePages {
  private readonly cursor: PageCursor;
  private seriesRead = 0;

  /** `from`: resume after a position a backend acknowledged (src/ledger/export-state/backfill.ts). */
  constructor(
    private readonly ledger: Ledger,
    private readonly opts: PageOptions,
    from: PageCursor = { phase: "usage", afterId: 0 },
  ) {
    this.cursor = { ...from };
    if (!Number.isInteger(opts.maxPoints) || opts.maxPoints < POINTS_PER_ROW)
      throw new Error(`points per page must be an integer >= ${POINTS_PER_ROW}: ${opts.maxPoints}`);
  }

  /** The position after the last page returned: a backend that acknowledged it has all before it. */
  position(): PageCursor {
    return { ...this.cursor };
  }

  /** Usage and tool series returned so far (progress; the other phases are few). */
  get series(): number {
    return this.seriesRead;
  }

  next(): MetricData[] | undefined {
    // A page is a unit of work: V8's young generation grows up to its cap, not past it (src/util/heap.ts).
    boundYoungGeneration();
    const o = this.opts;
    const c = this.cursor;
    let room = o.maxPoints;
    const usage: Parameters<typeof translate>[0] = [];
    const tools: Parameters<typeof translate>[1] = [];
    // Usage, then tool rows, while a whole row's points still fit; rows are kept only for this page.
    for (const phase of ["usage", "tool"] as const) {
      if (c.phase !== phase) continue;
      const limit = Math.floor(room / POINTS_PER_ROW);
      if (limit === 0) break;
      const n = this.take(this.rows(phase, limit), (phase === "usage" ? usage : tools) as unknown[]);
      room -= n * POINTS_PER_ROW;
      this.seriesRead += n;
      if (n < limit) this.enter(phase === "usage" ? "tool" : "outcome");
    }
    // cline.tool.calls by outcome: one point per row (tool_outcome_series, src/ledger/signals/tool-outcomes.ts).
    const outcomes: ToolOutcomeRow[] = [];
    if (c.phase === "outcome" && room > 0) {
      const t = this.ledger.signals?.toolOutcomes;
      let n = 0;
      if (t !== undefined && o.fold !== undefined) {
        for (const r of this.ledger.folds.outcome(o.filter, o.fold, { after: c.afterKey, limit: room })) {
          c.afterKey = r.key;
          n++;
          outcomes.push(r);
        }
      } else if (t !== undefined) {
        for (const r of t.livePage(o.filter, { afterId: c.afterId, limit: room })) {
          c.afterId = r.id;
          n++;
          outcomes.push(r);
        }
      }
      room -= n;
      if (t === undefined || room > 0) this.enter("edit");
    }
    // cline.code_edit.decisions and cline.lines_of_code: whole edit rows (src/ledger/delivered/edits.ts).
    const edits: EditSeriesRow[] = [];
    if (c.phase === "edit" && room >= POINTS_PER_EDIT_ROW) {
      const limit = Math.floor(room / POINTS_PER_EDIT_ROW);
      const n = this.take(
        o.fold !== undefined
          ? this.ledger.folds.edit(o.filter, o.fold, { after: c.afterKey, limit })
          : this.ledger.edits.livePage(o.filter, { afterId: c.afterId, limit }),
        edits,
      );
      room -= n * POINTS_PER_EDIT_ROW;
      if (n < limit) this.enter("activity");
    }
    // cline.active_time, cline.commits, cline.pull_requests, cline.sessions: a point per series
    // (activity_series, src/ledger/delivered/activity.ts), a few per session.
    const activity: ActivitySeriesRow[] = [];
    if (c.phase === "activity" && room > 0) {
      const limit = room;
      const n = this.take(
        o.fold !== undefined
          ? this.ledger.folds.activity(o.filter, o.fold, { after: c.afterKey, limit })
          : this.ledger.activity.livePage(o.filter, { afterId: c.afterId, limit }),
        activity,
      );
      room -= n;
      if (n < limit) this.enter("genai");
    }
    let genai: ReturnType<typeof translateGenai> = [];
    if (c.phase === "genai" && room > 0) {
      const g = this.ledger.signals?.genai;
      if (g === undefined) c.phase = "done";
      else if (o.fold !== undefined) {
        const { rows, last, done } = this.ledger.folds.genai(o.filter, o.fold, {
          after: c.afterKey,
          limit: room,
        });
        c.afterKey = last;
        if (done) c.phase = "done";
        genai = translateGenai(rows, o.translate);
      } else {
        // Whole ledger rows (a request row is up to three series): `done` once none is left.
        const { rows, lastId, done } = g.seriesLivePage(o.filter, { afterId: c.afterId, limit: room });
        c.afterId = lastId;
        if (done) c.phase = "done";
        genai = translateGenai(rows, o.translate);
      }
    }
    const startTime = nsToHrTime(o.startNs);
    const endNs = effectiveEndNs(o.startNs, o.endNs);
    const metrics = [
      ...toMetricData(translate(usage, tools, o.translate, outcomes, edits), o.temporality, o.startNs, endNs),
      ...activityPointsToMetricData(translateActivity(activity, o.translate), {
        temporality: o.temporality,
        startTime,
        endTime: nsToHrTime(endNs),
      }),
      ...genaiToMetricData(genai, o.temporality, startTime, nsToHrTime(endNs)),
    ];
    if (metrics.length > 0) return metrics;
    // Nothing on this page: either everything was read, or the phase just ended (read on).
    return c.phase === "done" ? undefined : this.next();
  }

  /** Moves the cursor past each row (its id, or folded, its group key) into `into`; returns how many. */
  private take<R>(
    rows: Iterable<R & ({ readonly id: number } | { readonly key: FoldCursor })>,
    into: R[],
  ): number {
    let n = 0;
    for (const r of rows) {
      if ("key" in r) this.cursor.afterKey = r.key;
      else this.cursor.afterId = r.id;
      into.push(r);
      n++;
    }
    return n;
  }

  /** The next phase, from its first series. */
  private enter(phase: BackfillPhase): void {
    this.cursor.phase = phase;
    this.cursor.afterId = 0;
    this.cursor.afterKey = undefined;
  }

  /** The usage or tool series of the next page: rows after the id, or groups after the key. */
  private rows(
    phase: "usage" | "tool",
    limit: number,
  ): Iterable<(UsageSeriesRow | ToolSeriesRow) & ({ readonly id: number } | { readonly key: FoldCursor })> {
    const o = this.opts;
    const c = this.cursor;
    if (o.fold !== undefined) {
      const page = { after: c.afterKey, limit };
      return phase === "usage"
        ? this.ledger.folds.usage(o.filter, o.fold, page)
        : this.ledger.folds.tool(o.filter, o.fold, page);
    }
    const page = { afterId: c.afterId, limit };
    return phase === "usage"
      ? this.ledger.liveUsagePage(o.filter, page)
      : this.ledger.liveToolPage(o.filter, page);
  }
}
