import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AggregationTemporality,
  type DataPoint,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import type { Temporality } from "../../../src/config/config.ts";
import { CommittingExporter } from "../../../src/export/committing-exporter.ts";
import { DeliveryTracker } from "../../../src/export/delivery.ts";
import { LedgerMetricProducer, SCOPE_NAME } from "../../../src/export/producer.ts";
import { NO_PRICES, type TranslateOptions } from "../../../src/export/translate.ts";
import type { Ledger } from "../../../src/ledger/ledger.ts";
import { createLogger, type Logger } from "../../../src/util/log.ts";

/** The SDK's in-memory exporter, with a switch that makes exports fail like a collector down. */
export class ScriptedExporter implements PushMetricExporter {
  readonly memory: InMemoryMetricExporter;
  fail = false;
  /** Fail only the export with this 0-based index (counting every call). */
  failAt: number | undefined;
  calls = 0;
  constructor(temporality: AggregationTemporality) {
    this.memory = new InMemoryMetricExporter(temporality);
  }
  export(metrics: ResourceMetrics, cb: (r: ExportResult) => void): void {
    const n = this.calls++;
    if (this.fail || n === this.failAt) {
      setTimeout(() => cb({ code: ExportResultCode.FAILED, error: new Error("Service Unavailable") }), 0);
      return;
    }
    this.memory.export(metrics, cb);
  }
  forceFlush(): Promise<void> {
    return this.memory.forceFlush();
  }
  shutdown(): Promise<void> {
    return this.memory.shutdown();
  }
  selectAggregationTemporality(): AggregationTemporality {
    return this.memory.selectAggregationTemporality(undefined as never);
  }
}

export interface Harness {
  readonly provider: MeterProvider;
  readonly scripted: ScriptedExporter;
  readonly exporter: CommittingExporter;
  readonly producer: LedgerMetricProducer;
  readonly tracker: DeliveryTracker;
  readonly logs: string[];
  /** Collect + export now. */
  flush(): Promise<void>;
  /** Points of metric `name` delivered by the last flush (all its requests). */
  lastPoints(name: string): DataPoint<number>[];
  /** Every delivered batch's points of metric `name`. */
  allPoints(name: string): DataPoint<number>[];
  shutdown(): Promise<void>;
}

export function harness(
  ledger: Ledger,
  opts: {
    temporality?: Temporality;
    ttlMs?: number;
    now?: () => number;
    translate?: Partial<TranslateOptions>;
    exporter?: string;
    maxPointsPerRequest?: number;
    maxWindowEvents?: number;
    maxWindowCaptures?: number;
    /** Cumulative: read the live series in pages of this many points (as the pipeline does). */
    pagePoints?: number;
    /** Delta: at most this many tool calls (seen, and final) per window. */
    maxWindowCalls?: number;
    /** Finalize calls of documents quiet this long before each collection (as the pipeline does). */
    quietMs?: number;
  } = {},
): Harness {
  const temporality = opts.temporality ?? "cumulative";
  const logs: string[] = [];
  const logger: Logger = createLogger("debug", (l) => logs.push(l));
  const tracker = new DeliveryTracker();
  const scripted = new ScriptedExporter(
    temporality === "delta" ? AggregationTemporality.DELTA : AggregationTemporality.CUMULATIVE,
  );
  const exporter = new CommittingExporter(scripted, {
    ledger,
    tracker,
    temporality,
    target: "memory",
    logger,
    ...(opts.maxPointsPerRequest ? { maxPointsPerRequest: opts.maxPointsPerRequest } : {}),
  });
  const producer = new LedgerMetricProducer(ledger, tracker, {
    exporter: opts.exporter ?? "memory",
    temporality,
    // The product's default TTL (7 days) only against a clock the test gives: on the real clock the
    // fixtures' fixed dates age out of it (they did on 2026-12-07, a week after 2026-11-30), and a
    // re-export of every test would then send nothing. A test of the TTL gives `now` (or `ttlMs`).
    seriesTtlMs: opts.ttlMs ?? (opts.now ? 7 * 24 * 3600_000 : Number.POSITIVE_INFINITY),
    translate: { project: "path", includeSessionId: true, priceOf: NO_PRICES, ...opts.translate },
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.maxWindowEvents ? { maxWindowEvents: opts.maxWindowEvents } : {}),
    ...(opts.maxWindowCaptures ? { maxWindowCaptures: opts.maxWindowCaptures } : {}),
    ...(opts.pagePoints ? { pagePoints: opts.pagePoints } : {}),
    ...(opts.maxWindowCalls ? { maxWindowCalls: opts.maxWindowCalls } : {}),
    ...(opts.quietMs !== undefined ? { quietMs: opts.quietMs } : {}),
  });
  const reader = new PeriodicExportingMetricReader({
    exporter,
    exportIntervalMillis: 3_600_000,
    metricProducers: [producer],
  });
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ "service.name": "t" }),
    readers: [reader],
  });
  const pointsOf = (batch: ResourceMetrics, name: string): DataPoint<number>[] =>
    batch.scopeMetrics
      .filter((s) => s.scope.name === SCOPE_NAME)
      .flatMap((s) => s.metrics)
      .filter((m) => m.descriptor.name === name)
      .flatMap((m) => m.dataPoints as DataPoint<number>[]);
  let lastFlushStart = 0;
  return {
    provider,
    scripted,
    exporter,
    producer,
    tracker,
    logs,
    flush: () => {
      lastFlushStart = scripted.memory.getMetrics().length;
      return provider.forceFlush();
    },
    lastPoints(name) {
      return scripted.memory
        .getMetrics()
        .slice(lastFlushStart)
        .flatMap((b) => pointsOf(b, name));
    },
    allPoints(name) {
      return scripted.memory.getMetrics().flatMap((b) => pointsOf(b, name));
    },
    shutdown: () => provider.shutdown(),
  };
}

export function hrToNs(t: readonly [number, number]): bigint {
  return BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]);
}

export function sumValues(points: readonly DataPoint<number>[]): number {
  return points.reduce((x, p) => x + p.value, 0);
}
