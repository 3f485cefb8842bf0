import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import type {
  AggregationOption,
  AggregationTemporality,
  InstrumentType,
  PushMetricExporter,
  ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import type { Temporality } from "../config/config.ts";
import type { Ledger } from "../ledger/ledger.ts";
import type { Logger } from "../util/log.ts";
import {
  commitDelivery,
  type DeliveryTracker,
  describeExportError,
  healthTransition,
  MAX_POINTS_PER_REQUEST,
  type PendingDelivery,
  splitByPoints,
} from "./delivery.ts";

export interface CommittingExporterOptions {
  readonly ledger: Ledger;
  readonly tracker: DeliveryTracker;
  readonly temporality: Temporality;
  /** Names the destination in log lines (the endpoint URL; never header values). */
  readonly target: string;
  readonly logger: Logger;
  readonly onFailure?: () => void;
  /** Cumulative batches are sent in requests of at most this many data points. */
  readonly maxPointsPerRequest?: number;
}

/** The outcome of exports since a `mark()`: nothing attempted counts as delivered. */
export type DeliveryOutcome = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/**
 * Wraps the SDK's push exporter: a SUCCESS commits what the batch carried to the ledger's
 * export state; anything else leaves it, so the next export carries it again. Logs once when
 * exports start failing and once when they recover.
 */
export class CommittingExporter implements PushMetricExporter {
  private attempts = 0;
  private last: { attempt: number; ok: boolean; reason: string } | undefined;
  private failing = false;
  private sealed = false;
  // Present only when the inner exporter has them, as the reader falls back to its defaults otherwise.
  readonly selectAggregationTemporality?: (instrumentType: InstrumentType) => AggregationTemporality;
  readonly selectAggregation?: (instrumentType: InstrumentType) => AggregationOption;

  constructor(
    private readonly inner: PushMetricExporter,
    private readonly opts: CommittingExporterOptions,
  ) {
    if (inner.selectAggregationTemporality) {
      this.selectAggregationTemporality = inner.selectAggregationTemporality.bind(inner);
    }
    if (inner.selectAggregation) this.selectAggregation = inner.selectAggregation.bind(inner);
  }

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    if (this.sealed) {
      // After the final flush: send nothing more (shutdown would export once again).
      resultCallback({
        code: ExportResultCode.FAILED,
        error: new Error("exporter closed after the final flush"),
      });
      return;
    }
    const attempt = ++this.attempts;
    const pending = this.opts.tracker.take(metrics.scopeMetrics);
    this.opts.tracker.begin();
    let done = false;
    const finish = (result: ExportResult): void => {
      if (done) return;
      done = true;
      this.opts.tracker.end();
      const ok = result.code === ExportResultCode.SUCCESS;
      if (ok) {
        for (const p of pending) {
          try {
            if (commitDelivery(this.opts.ledger, p, this.opts.temporality) === "stale") {
              this.opts.logger.debug(
                `export to ${this.opts.target}: a newer delivery already advanced the watermark`,
              );
            }
          } catch (e) {
            // Delivered but not recorded: the next export sends it again (at-least-once, logged).
            this.opts.logger.error(
              `export to ${this.opts.target} succeeded but the ledger could not record it: ${String(e)}`,
            );
          }
        }
      } else this.opts.onFailure?.();
      const reason = ok ? "" : describeExportError(result.error);
      this.last = { attempt, ok, reason };
      const t = healthTransition(this.failing, ok);
      this.failing = t.failing;
      if (t.event === "failing") {
        this.opts.logger.warn(
          `exports to ${this.opts.target} are failing: ${reason}; nothing is lost, the ledger keeps it for the next export`,
        );
      } else if (t.event === "recovered") this.opts.logger.info(`exports to ${this.opts.target} recovered`);
      resultCallback(result);
    };
    const requests =
      this.opts.temporality === "cumulative"
        ? splitByPoints(metrics, this.opts.maxPointsPerRequest ?? MAX_POINTS_PER_REQUEST)
        : [metrics];
    void this.sendAll(requests, pagedRequests(metrics, pending)).then(finish);
  }

  /**
   * Requests in order, then the pages of a paged collection, each read only once the request
   * before it was answered; the first failure ends the batch (what was sent is re-sent next time).
   */
  private async sendAll(
    requests: readonly ResourceMetrics[],
    pages: Iterable<ResourceMetrics>,
  ): Promise<ExportResult> {
    for (const r of requests) {
      const result = await this.send(r);
      if (result.code !== ExportResultCode.SUCCESS) return result;
    }
    try {
      for (const r of pages) {
        const result = await this.send(r);
        if (result.code !== ExportResultCode.SUCCESS) return result;
      }
    } catch (e) {
      // A page could not be read (the ledger): nothing is committed, the next export re-sends all.
      return { code: ExportResultCode.FAILED, error: e instanceof Error ? e : new Error(String(e)) };
    }
    return { code: ExportResultCode.SUCCESS };
  }

  private send(r: ResourceMetrics): Promise<ExportResult> {
    return new Promise<ExportResult>((resolve) => {
      try {
        this.inner.export(r, resolve);
      } catch (e) {
        resolve({ code: ExportResultCode.FAILED, error: e instanceof Error ? e : new Error(String(e)) });
      }
    });
  }

  /** Marks the current position; `outcomeSince` then judges the exports started after it. */
  mark(): number {
    return this.attempts;
  }

  outcomeSince(mark: number): DeliveryOutcome {
    if (this.attempts === mark) return { ok: true };
    if (this.last === undefined || this.last.attempt <= mark)
      return { ok: false, reason: "the export did not complete" };
    if (this.last.attempt !== this.attempts) return { ok: false, reason: "the last export did not complete" };
    return this.last.ok ? { ok: true } : { ok: false, reason: this.last.reason };
  }

  /** No further exports leave after this (used once the final flush has been judged). */
  seal(): void {
    this.sealed = true;
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

/**
 * The remaining pages of the paged collections a batch carries, as requests with the batch's
 * resource and the collection's scope. Lazy: a page is read when the previous request is done.
 */
function* pagedRequests(
  metrics: ResourceMetrics,
  pending: readonly PendingDelivery[],
): IterableIterator<ResourceMetrics> {
  for (const p of pending) {
    if (p.pages === undefined) continue;
    for (let page = p.pages.next(); page !== undefined; page = p.pages.next()) {
      yield { resource: metrics.resource, scopeMetrics: [{ scope: p.pages.scope, metrics: page }] };
    }
  }
}
