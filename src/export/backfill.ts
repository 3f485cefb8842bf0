/**
 * One cumulative export read in pages, acknowledged page by page. Before a page is read, every
 * request before it was acknowledged, so the position after the previous page is recorded in the
 * ledger (`export_backfill`, src/ledger/export-state/backfill.ts) first: a cut, a timeout, SIGTERM or
 * kill -9 keeps what the backend acknowledged, and the next collection resumes after it
 * (`resumePoint`) instead of sending the whole history again. The export state of the collection
 * that began the pass is committed only once its last page is delivered, in the same transaction
 * that drops the progress row (docs/design-export.md "A backfill, page by page").
 */
import type { MetricData, ScopeMetrics } from "@opentelemetry/sdk-metrics";
import type { BackfillProgress, ExportState, FoldKey, Ledger } from "../ledger/ledger.ts";
import { foldColumns } from "../ledger/usage/fold.ts";
import type { CumulativePages, PageCursor } from "./pages.ts";
import type { TranslateOptions } from "./translate.ts";

/** Usage and tool series acknowledged of the pass, of how many it began with (unknown: one page). */
export interface BackfillCount {
  readonly delivered: number;
  readonly total: number | undefined;
}

/** What identifies the series a pass sends: a pass begun under other options starts over. */
export function backfillOptions(t: TranslateOptions, fold: FoldKey | undefined): string {
  // Folded: the repository attributes change how series group (src/export/fold-key.ts), and the
  // cursor is a group key, its columns named (a pass recorded under an older key starts over).
  const folded =
    fold === undefined ? {} : { repository: t.repositoryOf !== undefined, key: foldColumns(fold) };
  return JSON.stringify({ project: t.project, includeSessionId: t.includeSessionId, ...folded });
}

/**
 * A pass this exporter left unfinished under the same options, to resume after its position;
 * not one that a later delivery overtook (a delta export in between moved `lastSuccessMs`).
 */
export function resumePoint(
  ledger: Ledger,
  base: ExportState,
  options: string,
): BackfillProgress | undefined {
  const saved = ledger.backfills?.get(base.exporter);
  if (saved === undefined || saved.options !== options || saved.phase === "done") return undefined;
  return saved.state.lastSuccessMs >= base.lastSuccessMs ? saved : undefined;
}

export interface PagedExportPlan {
  readonly options: string;
  /** What the pass commits once complete (`lastSuccessMs`: the time the pass began). */
  readonly next: ExportState;
  /** The unfinished pass this collection continues, if any. */
  readonly resumed: BackfillProgress | undefined;
  /** How many usage and tool series the pass sends (rows, or folded groups), counted once. */
  readonly count: () => number;
}

export class PagedExport {
  readonly scope: ScopeMetrics["scope"];
  private total: number | undefined;
  private deliveredHere = 0;

  constructor(
    private readonly ledger: Ledger,
    private readonly pages: CumulativePages,
    private readonly plan: PagedExportPlan,
    scope: ScopeMetrics["scope"],
  ) {
    this.scope = scope;
    this.total = plan.resumed?.total;
  }

  /** Whether this collection continues a pass a backend acknowledged in part. */
  get resumed(): boolean {
    return this.plan.resumed !== undefined;
  }

  /**
   * The next page, called only once every request before it was acknowledged: the position after
   * them is recorded first (only when there is a next page: a one-page export writes nothing).
   */
  next(): MetricData[] | undefined {
    const acked: PageCursor = this.pages.position();
    const seriesAcked = this.pages.series;
    const page = this.pages.next();
    this.deliveredHere = seriesAcked;
    if (page !== undefined) this.record(acked);
    return page;
  }

  /** Acknowledged so far (after the last call of `next`, the previous pages). */
  count(): BackfillCount {
    return { delivered: (this.plan.resumed?.delivered ?? 0) + this.deliveredHere, total: this.total };
  }

  /** The pass is complete: part of the transaction that commits its export state. */
  finish(): void {
    this.ledger.backfills?.drop(this.plan.next.exporter);
  }

  private record(at: PageCursor): void {
    this.total ??= this.plan.count();
    this.ledger.backfills?.put({
      exporter: this.plan.next.exporter,
      options: this.plan.options,
      state: this.plan.next,
      phase: at.phase,
      afterId: at.afterId,
      ...(at.afterKey === undefined ? {} : { afterKey: at.afterKey }),
      delivered: (this.plan.resumed?.delivered ?? 0) + this.deliveredHere,
      total: this.total,
    });
  }
}
