/**
 * Builds the export side of `cline-otel run`: one MeterProvider owning one reader per
 * configured exporter, each reader fed by its own LedgerMetricProducer (one export state per
 * destination), plus cline-otel's own health counters on real SDK instruments.
 */
import type { Counter } from "@opentelemetry/api";
import type { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import type { Resource } from "@opentelemetry/resources";
import {
  AggregationTemporality,
  ConsoleMetricExporter,
  type IMetricReader,
  MeterProvider,
  type PushMetricExporter,
} from "@opentelemetry/sdk-metrics";
import type { PassResult } from "../collector/pass.ts";
import type { ExportConfig, OtlpProtocol, Temporality } from "../config/config.ts";
import type { Ledger } from "../ledger/ledger.ts";
import type { Logger } from "../util/log.ts";
import { PRODUCER_ATTRIBUTE } from "./attributes.ts";
import type { BackfillCount } from "./backfill.ts";
import { CommittingExporter } from "./committing-exporter.ts";
import { commitScrape, DeliveryTracker, undeliveredBacklog } from "./delivery.ts";
import { createOtlpMetricExporter } from "./otlp-exporters.ts";
import { LedgerMetricProducer } from "./producer.ts";
import { PrometheusEndpoint } from "./prometheus.ts";
import { PushReader } from "./push-reader.ts";
import { buildResource } from "./resource.ts";
import { SignalPipeline } from "./signals/pipeline.ts";
import { teamOptions } from "./team-options.ts";
import type { PriceLookup } from "./translate.ts";

export interface PipelineOptions {
  readonly logger: Logger;
  readonly priceOf: PriceLookup;
  readonly serviceVersion: string;
  readonly hostName?: string;
  readonly now?: () => number;
  /** Replaces the SDK's OTLP exporter (tests). */
  readonly otlpExporter?: (cfg: ExportConfig) => PushMetricExporter | Promise<PushMetricExporter>;
  /** Points per cumulative page (one request each); CUMULATIVE_PAGE_POINTS unless a test sets it. */
  readonly pagePoints?: number;
  /** Events and calls per delta window (MAX_WINDOW_ROWS unless a test sets it). */
  readonly windowRows?: number;
  /** Told after each acknowledged page of a metrics export in pages (the progress bar). */
  readonly onProgress?: (target: string, p: BackfillCount, startedMs: number) => void;
}

/**
 * The export-state key of the OTLP exporter: one per destination, without credentials or query.
 * gRPC destinations are keyed apart from HTTP ones (`otlp grpc http://host:4317`).
 */
export function otlpExporterKey(endpoint: string, protocol: OtlpProtocol = "http/protobuf"): string {
  return protocol === "grpc"
    ? `otlp grpc ${displayEndpoint(endpoint, protocol)}`
    : `otlp ${displayEndpoint(endpoint)}`;
}

/** The endpoint as it may appear in logs: no user info, no query string (gRPC: no path either). */
export function displayEndpoint(endpoint: string, protocol: OtlpProtocol = "http/protobuf"): string {
  const u = new URL(endpoint);
  return protocol === "grpc" ? `${u.protocol}//${u.host}` : `${u.protocol}//${u.host}${u.pathname}`;
}

export function createOtlpExporter(cfg: ExportConfig): Promise<PushMetricExporter> {
  return createOtlpMetricExporter(cfg.otlp, cfg.temporality);
}

interface Pusher {
  readonly name: string;
  readonly target: string;
  readonly exporter: CommittingExporter;
  readonly producer: LedgerMetricProducer;
}

/** Events (and calls) per delta window over gRPC: a worst-case window stays under 4 MiB. */
const GRPC_WINDOW_ROWS = 1000;

/**
 * Points per cumulative request. Each page's objects live across its request's round trip, so
 * V8 promotes them to the old generation, where they stay until a full GC: at 10,000 points a
 * page (MAX_POINTS_PER_REQUEST) `run --once` on 10,000 sessions peaked at ~295 MB RSS, at 2,000
 * at ~237 MB, in the same time; with the heap policy (src/util/heap.ts) 1,000 points keep the
 * 484,000-series export at ~180 MB instead of 204–236 MB (docs/performance.md). ~0.25 MiB of
 * http/protobuf per request.
 */
const CUMULATIVE_PAGE_POINTS = 1000;

/** A request the SDK's exporter has not answered this long after its own timeout is abandoned. */
const REQUEST_GRACE_MS = 5000;

/** Upper bound on delta windows one flush sends while draining a backlog. */
const MAX_DRAIN_ROUNDS = 10_000;

export interface FlushFailure {
  readonly exporter: string;
  readonly target: string;
  readonly reason: string;
  /** `logs` or `traces` for the events and traces destinations; absent for metrics. */
  readonly signal?: string;
}

export type FlushOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly failures: readonly FlushFailure[] };

interface Health {
  readonly passes: Counter;
  readonly problems: Counter;
  readonly exportFailures: Counter;
}

export class ExportPipeline {
  private closed = false;

  private constructor(
    private readonly provider: MeterProvider | undefined,
    private readonly pushers: readonly Pusher[],
    private readonly prometheus: PrometheusEndpoint | undefined,
    private readonly health: Health | undefined,
    readonly resource: Resource,
    private readonly signals: SignalPipeline,
    /** TeamOptions.nextPass: the repositories' git files are looked at again after each pass. */
    private readonly nextPass: () => void,
  ) {}

  /** Where Prometheus can scrape, when the prometheus exporter is on. */
  get prometheusUrl(): string | undefined {
    return this.prometheus?.url;
  }

  /** Destinations, for the start-up log line. */
  describe(): string[] {
    const out = this.pushers.map((p) => `${p.name} ${p.target}`);
    if (this.prometheus) out.push(`prometheus ${this.prometheus.url}`);
    return [...out, ...this.signals.describe()];
  }

  static async start(cfg: ExportConfig, ledger: Ledger, opts: PipelineOptions): Promise<ExportPipeline> {
    const resource = buildResource(cfg, ledger.instanceId, opts.serviceVersion, opts.hostName);
    const team = teamOptions(cfg, resource, opts.logger);
    // Events and traces: nothing at all unless OTEL_LOGS_EXPORTER / OTEL_TRACES_EXPORTER ask for them.
    const signals = await SignalPipeline.create(cfg.signals, ledger, {
      logger: opts.logger,
      priceOf: opts.priceOf,
      project: cfg.project,
      resource,
      data: team.data,
      serviceVersion: opts.serviceVersion,
      ...(opts.now ? { now: opts.now } : {}),
    });
    signals.start();
    if (cfg.exporters.length === 0)
      return new ExportPipeline(undefined, [], undefined, undefined, resource, signals, team.nextPass);
    const readers: IMetricReader[] = [];
    const pushers: Pusher[] = [];
    let onExportFailure: (exporter: string) => void = () => {};
    const producer = (exporter: string, temporality: Temporality, tracker: DeliveryTracker, push: boolean) =>
      new LedgerMetricProducer(ledger, tracker, {
        exporter,
        temporality,
        seriesTtlMs: cfg.seriesTtlMs,
        // Cut-off tool calls become final (outcome unknown) on the metrics' schedule too.
        quietMs: cfg.signals.quietMs,
        translate: team.translate(opts.priceOf),
        ...(opts.now ? { now: opts.now } : {}),
        // gRPC servers refuse messages over 4 MiB by default (HTTP collectors: 20 MiB), and a
        // window carries the GenAI histograms too: half the rows per gRPC window.
        ...(opts.windowRows !== undefined
          ? { maxWindowEvents: opts.windowRows, maxWindowCalls: opts.windowRows }
          : cfg.otlp.protocol === "grpc" && exporter.startsWith("otlp ")
            ? { maxWindowEvents: GRPC_WINDOW_ROWS, maxWindowCalls: GRPC_WINDOW_ROWS }
            : {}),
        onError: (e) => opts.logger.error(`cannot read the ledger for ${exporter}: ${String(e)}`),
        // A push exporter's cumulative batch is read a request at a time (src/export/pages.ts).
        ...(push ? { pagePoints: opts.pagePoints ?? CUMULATIVE_PAGE_POINTS } : {}),
      });
    const addPusher = (name: string, target: string, key: string, inner: PushMetricExporter) => {
      const tracker = new DeliveryTracker();
      const exporter = new CommittingExporter(inner, {
        ledger,
        tracker,
        temporality: cfg.temporality,
        target,
        logger: opts.logger,
        onFailure: () => onExportFailure(name),
        // The SDK's exporter gives up on a request after the OTLP timeout (retries included).
        requestTimeoutMs: cfg.otlp.timeoutMs + REQUEST_GRACE_MS,
        ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
        ...(opts.now ? { now: opts.now } : {}),
      });
      const p = producer(key, cfg.temporality, tracker, true);
      readers.push(
        new PushReader({
          exporter,
          intervalMs: cfg.intervalMs,
          metricProducers: [p],
          logger: opts.logger,
          target,
          ...(opts.now ? { now: opts.now } : {}),
        }),
      );
      pushers.push({ name, target, exporter, producer: p });
    };

    let prometheusReader: PrometheusExporter | undefined;
    let prometheusProducer: LedgerMetricProducer | undefined;
    for (const name of cfg.exporters) {
      if (name === "otlp") {
        const target = displayEndpoint(cfg.otlp.endpoint, cfg.otlp.protocol);
        addPusher(
          name,
          target,
          otlpExporterKey(cfg.otlp.endpoint, cfg.otlp.protocol),
          await (opts.otlpExporter ?? createOtlpExporter)(cfg),
        );
      } else if (name === "console") {
        const temporality =
          cfg.temporality === "delta" ? AggregationTemporality.DELTA : AggregationTemporality.CUMULATIVE;
        addPusher(
          name,
          "stdout",
          "console",
          new ConsoleMetricExporter({ temporalitySelector: () => temporality }),
        );
      } else {
        // Prometheus pulls cumulative totals whatever the OTLP temporality.
        prometheusProducer = producer("prometheus", "cumulative", new DeliveryTracker(), false);
        // Loaded only when Prometheus is configured (its package is not small).
        const { PrometheusExporter } = await import("@opentelemetry/exporter-prometheus");
        prometheusReader = new PrometheusExporter({
          preventServerStart: true,
          metricProducers: [prometheusProducer],
        });
        readers.push(prometheusReader);
      }
    }

    const provider = new MeterProvider({ resource, readers });
    const meter = provider.getMeter("cline-otel.health");
    const health: Health = {
      passes: meter.createCounter("cline_otel.collector.passes", {
        unit: "{pass}",
        description: "Collection passes run by this process",
      }),
      problems: meter.createCounter("cline_otel.collector.problems", {
        unit: "{problem}",
        description: "Problems met while collecting (skipped or retried sources and messages), by code",
      }),
      exportFailures: meter.createCounter("cline_otel.export.failures", {
        unit: "{export}",
        description: "Exports that were not delivered (their data is carried into the next export)",
      }),
    };
    onExportFailure = (exporter) => health.exportFailures.add(1, { exporter, ...PRODUCER_ATTRIBUTE });

    let endpoint: PrometheusEndpoint | undefined;
    if (prometheusReader && prometheusProducer) {
      const p = prometheusProducer;
      try {
        endpoint = await PrometheusEndpoint.start(
          prometheusReader,
          cfg.prometheus.host,
          cfg.prometheus.port,
          (arrival) => {
            if (!p.failedSince(arrival)) commitScrape(ledger, "prometheus", arrival);
          },
        );
      } catch (e) {
        await provider.shutdown();
        throw e;
      }
    }
    return new ExportPipeline(provider, pushers, endpoint, health, resource, signals, team.nextPass);
  }

  /** Counts one collection pass in the health metrics; what is exported next sees the workspaces' git files anew. */
  recordPass(pass: PassResult): void {
    this.nextPass();
    if (!this.health) return;
    this.health.passes.add(1, PRODUCER_ATTRIBUTE);
    const byCode = new Map<string, number>();
    for (const p of pass.problems) byCode.set(p.code, (byCode.get(p.code) ?? 0) + 1);
    for (const [code, n] of byCode) this.health.problems.add(n, { code, ...PRODUCER_ATTRIBUTE });
  }

  /**
   * Collects and exports now, waits for delivery, and says which push destinations did not
   * receive it (nothing attempted = nothing to deliver = ok). Delta windows are bounded, so a
   * backlog is sent window after window until it is delivered or an export fails.
   */
  async flush(): Promise<FlushOutcome> {
    if (this.closed) return { ok: true };
    const [metrics, signals] = await Promise.all([this.flushMetrics(), this.signals.flush()]);
    return mergeOutcomes(metrics, signals);
  }

  private async flushMetrics(): Promise<FlushOutcome> {
    const provider = this.provider;
    if (!provider || this.closed) return { ok: true };
    const round = async (): Promise<FlushFailure[]> => {
      const marks = this.pushers.map((p) => p.exporter.mark());
      await provider.forceFlush();
      const failures: FlushFailure[] = [];
      this.pushers.forEach((p, i) => {
        const o = p.exporter.outcomeSince(marks[i] ?? 0);
        if (!o.ok) failures.push({ exporter: p.name, target: p.target, reason: o.reason });
      });
      return failures;
    };
    let failures = await round();
    let before = this.watermarks();
    for (let i = 0; failures.length === 0 && i < MAX_DRAIN_ROUNDS; i++) {
      if (!this.pushers.some((p) => p.producer.backlog())) break;
      failures = await round();
      const after = this.watermarks();
      if (after === before) break; // no progress: leave the rest to the next export
      before = after;
    }
    // Exports that "succeeded" without moving the watermarks did not deliver what was due.
    if (failures.length === 0)
      failures = undeliveredBacklog(this.pushers.map((p) => ({ ...p, backlog: p.producer.backlog() })));
    return failures.length === 0 ? { ok: true } : { ok: false, failures };
  }

  private watermarks(): string {
    return this.pushers.map((p) => p.producer.position()).join(";");
  }

  /**
   * A stop (SIGTERM, SIGINT): no request starts more than `ms` from now, metrics or signals; an
   * export in pages keeps what was acknowledged and the next run continues after it. The export
   * in flight then ends within one request timeout, so shutdown is bounded.
   */
  stopWithin(ms: number): void {
    for (const p of this.pushers) p.exporter.stopWithin(ms);
    this.signals.stopWithin(ms);
  }

  /**
   * Final flush, then the SDK in order: no export leaves after the judged flush (shutdown
   * would otherwise export once more), readers and exporters stop, the scrape server closes.
   */
  async shutdown(): Promise<FlushOutcome> {
    if (this.closed) return { ok: true };
    const [metrics, signals] = await Promise.all([this.flushMetrics(), this.signals.shutdown()]);
    this.closed = true;
    for (const p of this.pushers) p.exporter.seal();
    await this.provider?.shutdown();
    await this.prometheus?.close();
    return mergeOutcomes(metrics, signals);
  }
}

function mergeOutcomes(
  metrics: FlushOutcome,
  signals: Awaited<ReturnType<SignalPipeline["flush"]>>,
): FlushOutcome {
  const failures: FlushFailure[] = [
    ...(metrics.ok ? [] : metrics.failures),
    ...(signals.ok ? [] : signals.failures),
  ];
  return failures.length === 0 ? { ok: true } : { ok: false, failures };
}
