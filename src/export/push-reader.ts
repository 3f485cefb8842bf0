/**
 * The metric reader of a push exporter (OTLP, console), in place of the SDK's
 * PeriodicExportingMetricReader. That reader cuts a whole export at its export timeout
 * (`callWithTimeout` around `exporter.export`), then starts the next one while the cut one is
 * still sending: an export in pages of a large history never completed, and an abandoned export
 * ran on after shutdown, into a closed ledger. Here:
 *
 * * at most one export is in flight: a tick while one runs is skipped (and said so, at debug);
 * * an export is never cut as a whole: each request is bounded (OTEL_EXPORTER_OTLP_TIMEOUT in
 *   the SDK's exporter, `requestTimeoutMs` in the CommittingExporter), and an export in pages
 *   records each acknowledged page, so a long one makes progress whatever stops it;
 * * after an export ends, the next tick starts no export within half an interval, so a slow
 *   backend never gets exports back to back;
 * * shutdown waits for the export in flight (bounded by the stop deadline the pipeline set on
 *   the exporter plus one request) and never exports again.
 */
import type { PushMetricExporter } from "@opentelemetry/sdk-metrics";
import { type MetricProducer, MetricReader } from "@opentelemetry/sdk-metrics";
import type { Logger } from "../util/log.ts";

export interface PushReaderOptions {
  readonly exporter: PushMetricExporter;
  readonly intervalMs: number;
  readonly metricProducers: MetricProducer[];
  readonly logger: Logger;
  /** Names the destination in log lines. */
  readonly target: string;
  readonly now?: () => number;
}

export class PushReader extends MetricReader {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private lastEndMs = Number.NEGATIVE_INFINITY;
  private readonly now: () => number;

  constructor(private readonly opts: PushReaderOptions) {
    const exporter = opts.exporter;
    super({
      ...(exporter.selectAggregation
        ? { aggregationSelector: exporter.selectAggregation.bind(exporter) }
        : {}),
      ...(exporter.selectAggregationTemporality
        ? { aggregationTemporalitySelector: exporter.selectAggregationTemporality.bind(exporter) }
        : {}),
      metricProducers: opts.metricProducers,
    });
    if (!(opts.intervalMs > 0)) throw new Error(`export interval must be positive: ${opts.intervalMs}`);
    this.now = opts.now ?? Date.now;
  }

  protected override onInitialized(): void {
    this.timer = setInterval(() => this.tick(), this.opts.intervalMs);
    this.timer.unref();
  }

  /** The scheduled export: skipped while one runs, and for half an interval after one ended. */
  private tick(): void {
    if (this.running !== undefined) {
      this.opts.logger.debug(
        `export to ${this.opts.target} still running: this interval's export is skipped`,
      );
      return;
    }
    if (this.now() - this.lastEndMs < this.opts.intervalMs / 2) return;
    void this.run();
  }

  /** One export (collect, then every request of it); the one in flight if there is one. */
  private run(): Promise<void> {
    if (this.running !== undefined) return this.running;
    const run = this.exportOnce().finally(() => {
      this.running = undefined;
      this.lastEndMs = this.now();
    });
    this.running = run;
    return run;
  }

  private async exportOnce(): Promise<void> {
    let collected: Awaited<ReturnType<MetricReader["collect"]>>;
    try {
      collected = await this.collect();
    } catch (e) {
      // A reader shut down under a tick: nothing to export (logged, never thrown into a timer).
      this.opts.logger.debug(`export to ${this.opts.target}: nothing collected: ${String(e)}`);
      return;
    }
    // Collection errors were reported by the producer (onError); what was collected still goes.
    const { resourceMetrics } = collected;
    if (resourceMetrics.scopeMetrics.length === 0) return;
    await new Promise<void>((resolve) => {
      this.opts.exporter.export(resourceMetrics, () => resolve());
    });
  }

  /** Waits for the export in flight, then runs one (the flush's own). */
  protected override async onForceFlush(): Promise<void> {
    await this.running;
    await this.run();
    await this.opts.exporter.forceFlush();
  }

  protected override async onShutdown(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    await this.opts.exporter.shutdown();
  }
}
