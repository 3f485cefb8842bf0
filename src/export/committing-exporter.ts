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
import type { BackfillCount } from "./backfill.ts";
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
  /**
   * A request not answered after this long counts as failed and is abandoned (its late answer is
   * ignored): the SDK's OTLP exporter bounds each request by OTEL_EXPORTER_OTLP_TIMEOUT itself,
   * this is the guard for an exporter that never calls back.
   */
  readonly requestTimeoutMs?: number;
  /** Told after each acknowledged page of an export in pages (progress of a long first export). */
  readonly onProgress?: (target: string, p: BackfillCount, startedMs: number) => void;
  readonly now?: () => number;
}

/** An export in pages is reported in the log when it is longer than this, and every so often. */
const PROGRESS_LOG_MS = 30_000;

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
  /** No request starts at or after this time (a stop: SIGTERM, the end of `run --once`). */
  private stopAtMs = Number.POSITIVE_INFINITY;
  private lateGrace = 1;
  private readonly now: () => number;
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
    this.now = opts.now ?? Date.now;
  }

  /**
   * Requests that would start more than `ms` from now are not sent: an export in pages stops
   * after its current request, keeping what was acknowledged (the next run continues).
   */
  stopWithin(ms: number): void {
    this.stopAtMs = Math.min(this.stopAtMs, this.now() + ms);
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
    const requests =
      this.opts.temporality === "cumulative"
        ? splitByPoints(metrics, this.opts.maxPointsPerRequest ?? MAX_POINTS_PER_REQUEST)
        : [metrics];
    void this.sendAll(requests, metrics, pending).then((result) => {
      this.opts.tracker.end();
      this.finish(attempt, pending, result);
      resultCallback(result);
    });
  }

  private finish(attempt: number, pending: readonly PendingDelivery[], result: ExportResult): void {
    const ok = result.code === ExportResultCode.SUCCESS;
    // The ledger may be closed under an export that was given up on: it records nothing then.
    if (ok && this.opts.ledger.isOpen) {
      for (const p of pending) {
        try {
          const committed = this.opts.ledger.transaction(() => {
            const r = commitDelivery(this.opts.ledger, p, this.opts.temporality);
            p.pages?.finish();
            return r;
          });
          if (committed === "stale") {
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
    } else if (!ok) this.opts.onFailure?.();
    const reason = ok ? "" : describeExportError(result.error);
    this.last = { attempt, ok, reason };
    const t = healthTransition(this.failing, ok);
    this.failing = t.failing;
    if (t.event === "failing") {
      this.opts.logger.warn(
        `exports to ${this.opts.target} are failing: ${reason}; nothing is lost, the ledger keeps it for the next export`,
      );
    } else if (t.event === "recovered") this.opts.logger.info(`exports to ${this.opts.target} recovered`);
  }

  /**
   * The collected requests in order, then the pages of a paged collection, each read only once
   * the request before it was acknowledged (which records that acknowledgement: backfill.ts). The
   * first failure, or a stop, ends the batch; what was acknowledged stays delivered.
   */
  private async sendAll(
    requests: readonly ResourceMetrics[],
    metrics: ResourceMetrics,
    pending: readonly PendingDelivery[],
  ): Promise<ExportResult> {
    const carrier = pending.find((p) => p.pages !== undefined);
    const paged = carrier?.pages;
    // A first export to this destination, or one continuing a cut one: the history, logged.
    const history = carrier !== undefined && (carrier.base.lastSuccessMs === 0 || paged?.resumed === true);
    const started = this.now();
    let logged = started;
    let announced = false;
    let sent = 0;
    const stopped = (): ExportResult | undefined => {
      if (this.sealed || !this.opts.ledger.isOpen)
        return { code: ExportResultCode.FAILED, error: new Error(stopReason(paged?.count())) };
      if (this.now() < this.stopAtMs) return undefined;
      // One export's first request may still leave after the deadline (bounded by its own
      // timeout): a stop during a long collection still gets a final export.
      if (sent === 0 && this.lateGrace > 0) {
        this.lateGrace--;
        return undefined;
      }
      return { code: ExportResultCode.FAILED, error: new Error(stopReason(paged?.count())) };
    };
    for (const r of requests) {
      const stop = stopped();
      if (stop) return stop;
      sent++;
      const result = await this.send(r);
      if (result.code !== ExportResultCode.SUCCESS) return withProgress(result, paged?.count());
    }
    if (paged === undefined) return { code: ExportResultCode.SUCCESS };
    try {
      for (;;) {
        // Every request so far was acknowledged: reading the next page records that.
        const stop = stopped();
        if (stop) return stop;
        const page = paged.next();
        const count = paged.count();
        this.opts.onProgress?.(this.opts.target, count, started);
        if (history && !announced && page !== undefined) {
          announced = true;
          this.opts.logger.info(historyLine(this.opts.target, count, paged.resumed));
        }
        if (this.now() - logged >= PROGRESS_LOG_MS) {
          logged = this.now();
          this.opts.logger.info(progressLine(this.opts.target, count, started, logged, page === undefined));
        }
        if (page === undefined) break;
        sent++;
        const result = await this.send({
          resource: metrics.resource,
          scopeMetrics: [{ scope: paged.scope, metrics: page }],
        });
        if (result.code !== ExportResultCode.SUCCESS) return withProgress(result, paged.count());
      }
    } catch (e) {
      // A page could not be read or recorded (the ledger): what was recorded stays delivered.
      return { code: ExportResultCode.FAILED, error: e instanceof Error ? e : new Error(String(e)) };
    }
    if (announced || logged !== started)
      this.opts.logger.info(progressLine(this.opts.target, paged.count(), started, this.now(), true));
    return { code: ExportResultCode.SUCCESS };
  }

  /** One request; its answer, or FAILED once `requestTimeoutMs` passed (a late answer is ignored). */
  private send(r: ResourceMetrics): Promise<ExportResult> {
    const timeoutMs = this.opts.requestTimeoutMs ?? 120_000;
    return new Promise<ExportResult>((resolve) => {
      const timer = setTimeout(
        () =>
          resolve({ code: ExportResultCode.FAILED, error: new Error(`no answer within ${timeoutMs} ms`) }),
        timeoutMs,
      );
      timer.unref();
      const done = (result: ExportResult): void => {
        clearTimeout(timer);
        resolve(result);
      };
      try {
        this.inner.export(r, done);
      } catch (e) {
        done({ code: ExportResultCode.FAILED, error: e instanceof Error ? e : new Error(String(e)) });
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

/** Why an export in pages stopped before its end, with what was acknowledged. */
function stopReason(c: BackfillCount | undefined): string {
  const base = "stopped before the export was complete";
  return c === undefined ? base : `${base} (${countText(c)})`;
}

function withProgress(result: ExportResult, c: BackfillCount | undefined): ExportResult {
  if (c === undefined || c.total === undefined) return result;
  const e = result.error ?? new Error("export failed");
  const reason = `${describeExportError(e)}; ${countText(c)}`;
  return { code: result.code, error: Object.assign(new Error(reason), { name: "PartialDelivery" }) };
}

/**
 * ` of 40,000` while the pages are within the count taken when the export began; past it (a
 * backfill kept committing while the export paged: its pages continue past the first count),
 * ` (40,000 when the export began)`, never "12,000 of 4,000".
 */
function ofTotal(c: BackfillCount): string {
  if (c.total === undefined) return "";
  const total = c.total.toLocaleString("en-US");
  return c.delivered <= c.total ? ` of ${total}` : ` (${total} when the export began)`;
}

/** `12,000 of 40,000 series delivered, the next export continues after them`. */
export function countText(c: BackfillCount): string {
  return `${c.delivered.toLocaleString("en-US")}${ofTotal(c)} series delivered, the next export continues after them`;
}

/** The start of a first (or resumed) export that takes more than one page. */
function historyLine(target: string, c: BackfillCount, resumed: boolean): string {
  const total = c.total === undefined ? "" : `${c.total.toLocaleString("en-US")} series, `;
  const from = resumed
    ? `, continuing after the ${c.delivered.toLocaleString("en-US")} already acknowledged`
    : "";
  return `sending the history to ${target} in pages (${total}one request each${from}); each acknowledged page is kept`;
}

/** One log line on a long export in pages: how far, how fast. */
export function progressLine(
  target: string,
  c: BackfillCount,
  startedMs: number,
  nowMs: number,
  done: boolean,
): string {
  const s = Math.max(0.001, (nowMs - startedMs) / 1000);
  const rate = `${Math.round(c.delivered / s).toLocaleString("en-US")} series/s`;
  return done
    ? `export to ${target} in pages delivered: ${c.delivered.toLocaleString("en-US")} series in ${s.toFixed(0)} s (${rate})`
    : `export to ${target} in pages: ${c.delivered.toLocaleString("en-US")}${ofTotal(c)} series delivered (${rate})`;
}
