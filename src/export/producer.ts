/**
 * The ledger as an OpenTelemetry MetricProducer. No SDK instrument ever sees a ledger row:
 * a synchronous counter's cumulative stream starts at process start (a restart would begin a
 * new stream holding old totals, double counted by every backend) and folds series beyond its
 * cardinality limit (2000) into an overflow series. Instead each collection reads the ledger's
 * maintained series totals and returns monotonic SUM points whose start time is the ledger's
 * persisted stream start: restarts, crashes, re-exports and retries all re-send the same
 * stream, so nothing can be counted twice or lost. The provider-request capture metrics
 * (`cline.request.*`, docs/captures.md) come from the ledger's capture series the same way.
 */
import { emptyResource } from "@opentelemetry/resources";
import type { CollectionResult, MetricData, MetricProducer, ScopeMetrics } from "@opentelemetry/sdk-metrics";
import type { Temporality } from "../config/config.ts";
import type { ExportState, FoldKey, Ledger } from "../ledger/ledger.ts";
import {
  type ActivityPoint,
  activityPointsToMetricData,
  liveActivityPoints,
  translateActivity,
} from "./activity.ts";
import { backfillOptions, PagedExport, resumePoint } from "./backfill.ts";
import {
  type CaptureSeriesPoint,
  capturePointsToMetricData,
  liveCapturePoints,
  translateCaptures,
} from "./captures.ts";
import {
  type CompactionPoint,
  compactionPointsToMetricData,
  liveCompactionPoints,
  translateCompactions,
} from "./compactions.ts";
import { commitDelivery, type DeliveryTracker } from "./delivery.ts";
import { foldKeyOf } from "./fold-key.ts";
import { type GenaiPoint, genaiToMetricData, liveGenai, translateGenai } from "./genai/metrics.ts";
import { effectiveEndNs, nsToHrTime, toMetricData } from "./metric-data.ts";
import { CumulativePages } from "./pages.ts";
import {
  liveSeries,
  type MetricId,
  type SeriesPoint,
  type TranslateOptions,
  translate,
} from "./translate.ts";

/**
 * The instrumentation scope of every contract metric. No version on purpose: Prometheus turns
 * it into a label, and an upgrade must not start new series.
 */
export const SCOPE_NAME = "cline-otel";

export interface ProducerOptions {
  /** The export_state key of the exporter this producer feeds (one producer per exporter). */
  readonly exporter: string;
  readonly temporality: Temporality;
  readonly seriesTtlMs: number;
  readonly translate: TranslateOptions;
  readonly now?: () => number;
  /** Told about a collection that could not read the ledger (the reader gets it as an error too). */
  readonly onError?: (e: unknown) => void;
  /**
   * Delta: at most this many events, and this many tool calls, per window, so one window always
   * fits one request (a window cannot be split without risking a partial delivery). A backlog
   * drains over successive exports; `ExportPipeline.flush` drains it all.
   */
  readonly maxWindowEvents?: number;
  readonly maxWindowCalls?: number;
  /** Delta: at most this many provider-request captures per window (MAX_WINDOW_CAPTURES). */
  readonly maxWindowCaptures?: number;
  /**
   * Cumulative, push exporters: read the live series in pages of at most this many points, the
   * first in the collection, the others read by the CommittingExporter one request at a time
   * (src/export/pages.ts), so the export holds one request's points, not every live series.
   * Series that collapse are read folded in SQL, by group key (src/ledger/usage/fold.ts). Never for a
   * pull exporter, which serializes one whole collection.
   */
  readonly pagePoints?: number;
  /**
   * Before each collection, finalize the tool calls and turns whose document has been quiet this
   * long (CLINE_OTEL_QUIET_TIME): a call without a result is then counted in cline.tool.calls with
   * outcome unknown, with or without the events and traces exporters (which do the same).
   */
  readonly quietMs?: number;
}

export const MAX_WINDOW_ROWS = 2000;

/**
 * File edits per delta window: an edit in a series of its own is up to 5 points (~2.6 KB of
 * http/json), so 500 of them (~1.3 MiB) next to a worst-case window of events, calls and captures
 * (~16 MiB) keep one request under the OpenTelemetry Collector's 20 MiB body limit.
 */
export const MAX_WINDOW_EDITS = 500;

/**
 * A capture in a series of its own costs ~5 KB of http/json (two histograms and up to nine
 * sums); 1,000 of them next to a worst-case window of events and calls (~12 MiB) keep one
 * request under the OpenTelemetry Collector's 20 MiB body limit.
 */
export const MAX_WINDOW_CAPTURES = 1000;

export class LedgerMetricProducer implements MetricProducer {
  private readonly now: () => number;
  /** How the series fold (src/export/fold-key.ts), one object for the producer's life (its statements). */
  private readonly fold: FoldKey | undefined;
  private lastErrorMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly ledger: Ledger,
    private readonly tracker: DeliveryTracker,
    private readonly opts: ProducerOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.fold = foldKeyOf(opts.translate);
  }

  /** Where this exporter's delivered state stands (detects a drain that makes no progress). */
  position(): string {
    const s = this.ledger.getExportState(this.opts.exporter);
    return `${s.eventWatermark}/${s.callWatermark}/${s.captureWatermark}/${s.compactionWatermark ?? 0}/${s.finalCallWatermark ?? 0}/${s.editWatermark ?? 0}/${s.activityWatermark ?? 0}`;
  }

  /** Delta: whether the ledger holds events, calls or captures beyond what was delivered. */
  backlog(): boolean {
    if (this.opts.temporality !== "delta") return false;
    const state = this.ledger.getExportState(this.opts.exporter);
    const ids = this.ledger.maxIds();
    return (
      ids.event > state.eventWatermark ||
      ids.call > state.callWatermark ||
      this.ledger.maxCaptureId() > state.captureWatermark ||
      this.ledger.maxCompactionId() > (state.compactionWatermark ?? 0) ||
      (this.ledger.signals?.toolOutcomes.pending(state.finalCallWatermark ?? 0) ?? false) ||
      this.ledger.maxEditId() > (state.editWatermark ?? 0) ||
      this.ledger.maxActivityId() > (state.activityWatermark ?? 0)
    );
  }

  /** Whether a collection failed at or after `ms` (a scrape served then did not carry the series). */
  failedSince(ms: number): boolean {
    return this.lastErrorMs >= ms;
  }

  async collect(): Promise<CollectionResult> {
    const resource = emptyResource();
    try {
      const scope = this.read();
      return { resourceMetrics: { resource, scopeMetrics: scope ? [scope] : [] }, errors: [] };
    } catch (e) {
      this.lastErrorMs = this.now();
      this.opts.onError?.(e);
      return { resourceMetrics: { resource, scopeMetrics: [] }, errors: [e] };
    }
  }

  /**
   * One consistent read: better-sqlite3 is synchronous and this process is the ledger's only
   * writer, so no commit can land between the max-id read and the series read.
   */
  private read(): ScopeMetrics | undefined {
    const ledger = this.ledger;
    const opts = this.opts;
    const delta = opts.temporality === "delta";
    // No window or batch is built while the previous one may still be being delivered: a delta
    // window must not overlap it, and a second cumulative batch would only double the memory
    // (the next export carries the same totals, newer).
    if (this.tracker.busy()) return undefined;
    const nowMs = this.now();
    // Its own transaction, before anything is read: what it finalizes is in this collection.
    if (opts.quietMs !== undefined) ledger.signals?.finalizeQuiet(nowMs, opts.quietMs);
    const base = ledger.getExportState(opts.exporter);
    const captureBase = base.captureWatermark;
    const compactionBase = base.compactionWatermark ?? 0;
    const max = ledger.maxIds();
    const maxCapture = ledger.maxCaptureId();
    // Compactions are few (one per compaction): a window takes all of them.
    const compactionUpTo = ledger.maxCompactionId();
    // Final tool calls (cline.tool.calls by outcome, delta cline.tool.duration): a window of the
    // signal queue, in the order calls became final, at most maxWindowCalls of them.
    const outcomes = ledger.signals?.toolOutcomes;
    const finalBase = base.finalCallWatermark ?? 0;
    const finalUpTo =
      outcomes === undefined
        ? finalBase
        : delta
          ? outcomes.windowEnd(finalBase, opts.maxWindowCalls ?? MAX_WINDOW_ROWS)
          : outcomes.maxSeq();
    const finalWindow = { after: finalBase, upTo: finalUpTo };
    // File edits (cline.code_edit.decisions, cline.lines_of_code): an id window of the edits' packs.
    const editBase = base.editWatermark ?? 0;
    const maxEdit = ledger.maxEditId();
    const editRows = Math.min(opts.maxWindowCalls ?? MAX_WINDOW_ROWS, MAX_WINDOW_EDITS);
    // Whole packs (a document's edits of one commit, schema v6) of at most editRows edits.
    const editUpTo = delta ? ledger.editWindowEnd(editBase, editRows) : maxEdit;
    // Active time, commits, pull requests, sessions: an id window of the activity records.
    const activityBase = base.activityWatermark ?? 0;
    const maxActivity = ledger.maxActivityId();
    const activityUpTo = delta
      ? Math.min(maxActivity, activityBase + (opts.maxWindowCalls ?? MAX_WINDOW_ROWS))
      : maxActivity;
    const ids = delta
      ? {
          event: Math.min(max.event, base.eventWatermark + (opts.maxWindowEvents ?? MAX_WINDOW_ROWS)),
          call: Math.min(max.call, base.callWatermark + (opts.maxWindowCalls ?? MAX_WINDOW_ROWS)),
          capture: Math.min(maxCapture, captureBase + (opts.maxWindowCaptures ?? MAX_WINDOW_CAPTURES)),
        }
      : { ...max, capture: maxCapture };
    let points: Map<MetricId, SeriesPoint[]>;
    let captures: CaptureSeriesPoint[];
    let compactions: CompactionPoint[];
    let activity: ActivityPoint[];
    let genai: GenaiPoint[];
    let startNs: bigint;
    let pages: CumulativePages | undefined;
    let firstPage: MetricData[] = [];
    let paging: { options: string; resumed: ReturnType<typeof resumePoint>; count: () => number } | undefined;
    if (delta) {
      points = translate(
        ledger.usageDelta(base.eventWatermark, ids.event),
        ledger.toolDelta(
          { after: base.callWatermark, upTo: ids.call },
          { after: base.eventWatermark, upTo: ids.event },
        ),
        opts.translate,
        outcomes?.delta(finalWindow) ?? [],
        ledger.editDelta(editBase, editUpTo),
      );
      captures = translateCaptures(ledger.captureDelta(captureBase, ids.capture), opts.translate);
      compactions = translateCompactions(
        ledger.compactionDelta(compactionBase, compactionUpTo),
        opts.translate,
      );
      activity = translateActivity(ledger.activityDelta(activityBase, activityUpTo), opts.translate);
      // GenAI histograms of the same event window (src/export/genai/metrics.ts), and the tool
      // durations of the final-call window (a duration is known once its call is final).
      genai = translateGenai(
        [
          ...(ledger.signals?.genaiDelta(base.eventWatermark, ids.event) ?? []),
          ...(outcomes?.durationDelta(finalWindow) ?? []),
        ],
        opts.translate,
      );
      startNs = base.windowStartNs;
    } else {
      // The edits' and activity's series are summed from their records here, not by each commit
      // (schema v7): what this pass reads, whole or in pages, is current to now.
      ledger.foldSeries();
      // The TTL (isLive) in SQL, so dead series are never even read: a WHERE on each row where a
      // series is one row, a HAVING on each group's newest times where series fold (fold-key.ts).
      const fold = this.fold;
      const filter = { eventSinceMs: nowMs - opts.seriesTtlMs, updatedSinceMs: base.lastSuccessMs };
      startNs = ledger.streamStartNs;
      const paged = opts.pagePoints !== undefined;
      if (paged) {
        // Usage, tool and GenAI series in pages; the first one now.
        // A pass a backend acknowledged in part continues after what it acknowledged (backfill.ts).
        const options = backfillOptions(opts.translate, fold);
        const resumed = resumePoint(ledger, base, options);
        pages = new CumulativePages(
          ledger,
          {
            filter,
            translate: opts.translate,
            temporality: opts.temporality,
            startNs,
            endNs: BigInt(nowMs) * 1_000_000n,
            maxPoints: opts.pagePoints as number,
            fold,
          },
          resumed === undefined
            ? undefined
            : { phase: resumed.phase, afterId: resumed.afterId, afterKey: resumed.afterKey },
        );
        firstPage = pages.next() ?? [];
        if (firstPage.length === 0) {
          pages = undefined;
          if (resumed !== undefined) {
            // Nothing after the acknowledged position: the pass is complete, then a whole collection.
            ledger.transaction(() => {
              commitDelivery(ledger, { base, next: resumed.state }, "cumulative");
              ledger.backfills?.drop(opts.exporter);
            });
            return this.read();
          }
        }
        const count = () =>
          fold === undefined ? ledger.liveSeriesCount(filter) : ledger.folds.count(filter, fold);
        paging = { options, resumed, count };
        points = new Map();
      } else {
        const all = { after: undefined, limit: -1 };
        points =
          fold === undefined
            ? translate(
                ledger.liveUsageSeries(filter),
                ledger.liveToolSeries(filter),
                opts.translate,
                outcomes?.live(filter) ?? [],
                ledger.edits.live(filter),
              )
            : translate(
                ledger.folds.usage(filter, fold, all),
                ledger.folds.tool(filter, fold, all),
                opts.translate,
                outcomes === undefined ? [] : ledger.folds.outcome(filter, fold, all),
                ledger.folds.edit(filter, fold, all),
              );
        for (const [id, series] of points) {
          points.set(id, liveSeries(series, nowMs, opts.seriesTtlMs, base.lastSuccessMs));
        }
      }
      captures = liveCapturePoints(
        translateCaptures(ledger.captureSeries(), opts.translate),
        nowMs,
        opts.seriesTtlMs,
        base.lastSuccessMs,
      );
      compactions = liveCompactionPoints(
        translateCompactions(ledger.compactionSeries(), opts.translate),
        nowMs,
        opts.seriesTtlMs,
        base.lastSuccessMs,
      );
      // A few series per session: in the pages where there are pages (their phase after the edits'),
      // else whole, folded here like the compactions'.
      activity = paged
        ? []
        : liveActivityPoints(
            translateActivity(ledger.activity.live(filter), opts.translate),
            nowMs,
            opts.seriesTtlMs,
            base.lastSuccessMs,
          );
      genai = paged
        ? [] // in the pages
        : liveGenai(
            translateGenai(
              (fold === undefined
                ? ledger.signals?.genaiSeriesLive(filter)
                : ledger.signals && ledger.folds.genai(filter, fold, { after: undefined, limit: -1 }).rows) ??
                [],
              opts.translate,
            ),
            nowMs,
            opts.seriesTtlMs,
            base.lastSuccessMs,
          );
    }
    const endNs = effectiveEndNs(startNs, BigInt(nowMs) * 1_000_000n);
    const metrics = [
      ...firstPage,
      ...toMetricData(points, opts.temporality, startNs, endNs),
      ...capturePointsToMetricData(captures, {
        temporality: opts.temporality,
        startTime: nsToHrTime(startNs),
        endTime: nsToHrTime(endNs),
      }),
      ...compactionPointsToMetricData(compactions, {
        temporality: opts.temporality,
        startTime: nsToHrTime(startNs),
        endTime: nsToHrTime(endNs),
      }),
      ...genaiToMetricData(genai, opts.temporality, nsToHrTime(startNs), nsToHrTime(endNs)),
      ...activityPointsToMetricData(activity, {
        temporality: opts.temporality,
        startTime: nsToHrTime(startNs),
        endTime: nsToHrTime(endNs),
      }),
    ];
    if (metrics.length === 0) return undefined;
    const scope: ScopeMetrics = { scope: { name: SCOPE_NAME }, metrics };
    const fresh: ExportState = {
      exporter: opts.exporter,
      eventWatermark: ids.event,
      callWatermark: ids.call,
      captureWatermark: ids.capture,
      compactionWatermark: compactionUpTo,
      finalCallWatermark: finalUpTo,
      editWatermark: editUpTo,
      activityWatermark: activityUpTo,
      windowStartNs: endNs,
      // Every ledger change older than this read is in this collection.
      lastSuccessMs: nowMs,
    };
    // A resumed pass commits what the collection that began it read.
    const next = paging?.resumed?.state ?? fresh;
    this.tracker.register(
      scope,
      pages && paging
        ? {
            base,
            next,
            pages: new PagedExport(
              ledger,
              pages,
              { options: paging.options, next, count: paging.count, resumed: paging.resumed },
              scope.scope,
            ),
          }
        : { base, next },
    );
    return scope;
  }
}
