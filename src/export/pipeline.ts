/**
 * Builds the export side of `cline-otel run`: one MeterProvider owning one reader per
 * configured exporter, each reader fed by its own LedgerMetricProducer (one export state per
 * destination), plus cline-otel's own health counters on real SDK instruments.
 */
import type { Counter } from "@opentelemetry/api";
import {
  AggregationTemporalityPreference,
  OTLPMetricExporter as OtlpJsonExporter,
} from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPMetricExporter as OtlpProtoExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import type { Resource } from "@opentelemetry/resources";
import {
  AggregationTemporality,
  ConsoleMetricExporter,
  type IMetricReader,
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
} from "@opentelemetry/sdk-metrics";
import type { PassResult } from "../collector/pass.ts";
import type { ExportConfig, Temporality } from "../config/config.ts";
import type { Ledger } from "../ledger/ledger.ts";
import type { Logger } from "../util/log.ts";
import { CommittingExporter } from "./committing-exporter.ts";
import { commitScrape, DeliveryTracker } from "./delivery.ts";
import { LedgerMetricProducer } from "./producer.ts";
import { PrometheusEndpoint } from "./prometheus.ts";
import { buildResource } from "./resource.ts";
import type { PriceLookup } from "./translate.ts";

export interface PipelineOptions {
  readonly logger: Logger;
  readonly priceOf: PriceLookup;
  readonly serviceVersion: string;
  readonly hostName?: string;
  readonly now?: () => number;
  /** Replaces the SDK's OTLP exporter (tests). */
  readonly otlpExporter?: (cfg: ExportConfig) => PushMetricExporter;
}

/** The export-state key of the OTLP exporter: one per destination, without credentials or query. */
export function otlpExporterKey(endpoint: string): string {
  const u = new URL(endpoint);
  return `otlp ${u.protocol}//${u.host}${u.pathname}`;
}

/** The endpoint as it may appear in logs: no user info, no query string. */
export function displayEndpoint(endpoint: string): string {
  const u = new URL(endpoint);
  return `${u.protocol}//${u.host}${u.pathname}`;
}

export function createOtlpExporter(cfg: ExportConfig): PushMetricExporter {
  const options = {
    url: cfg.otlp.endpoint,
    headers: { ...cfg.otlp.headers },
    timeoutMillis: cfg.otlp.timeoutMs,
    temporalityPreference:
      cfg.temporality === "delta"
        ? AggregationTemporalityPreference.DELTA
        : AggregationTemporalityPreference.CUMULATIVE,
  };
  return cfg.otlp.protocol === "http/json" ? new OtlpJsonExporter(options) : new OtlpProtoExporter(options);
}

interface Pusher {
  readonly name: string;
  readonly target: string;
  readonly exporter: CommittingExporter;
  readonly producer: LedgerMetricProducer;
}

/** Upper bound on delta windows one flush sends while draining a backlog. */
const MAX_DRAIN_ROUNDS = 10_000;

export interface FlushFailure {
  readonly exporter: string;
  readonly target: string;
  readonly reason: string;
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
  ) {}

  /** Where Prometheus can scrape, when the prometheus exporter is on. */
  get prometheusUrl(): string | undefined {
    return this.prometheus?.url;
  }

  /** Destinations, for the start-up log line. */
  describe(): string[] {
    const out = this.pushers.map((p) => `${p.name} ${p.target}`);
    if (this.prometheus) out.push(`prometheus ${this.prometheus.url}`);
    return out;
  }

  static async start(cfg: ExportConfig, ledger: Ledger, opts: PipelineOptions): Promise<ExportPipeline> {
    const resource = buildResource(cfg, ledger.instanceId, opts.serviceVersion, opts.hostName);
    if (cfg.exporters.length === 0) return new ExportPipeline(undefined, [], undefined, undefined, resource);
    const readers: IMetricReader[] = [];
    const pushers: Pusher[] = [];
    let onExportFailure: (exporter: string) => void = () => {};
    const producer = (exporter: string, temporality: Temporality, tracker: DeliveryTracker) =>
      new LedgerMetricProducer(ledger, tracker, {
        exporter,
        temporality,
        seriesTtlMs: cfg.seriesTtlMs,
        translate: { project: cfg.project, includeSessionId: cfg.includeSessionId, priceOf: opts.priceOf },
        ...(opts.now ? { now: opts.now } : {}),
        onError: (e) => opts.logger.error(`cannot read the ledger for ${exporter}: ${String(e)}`),
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
      });
      const p = producer(key, cfg.temporality, tracker);
      readers.push(
        new PeriodicExportingMetricReader({
          exporter,
          exportIntervalMillis: cfg.intervalMs,
          exportTimeoutMillis: cfg.timeoutMs,
          metricProducers: [p],
        }),
      );
      pushers.push({ name, target, exporter, producer: p });
    };

    let prometheusReader: PrometheusExporter | undefined;
    let prometheusProducer: LedgerMetricProducer | undefined;
    for (const name of cfg.exporters) {
      if (name === "otlp") {
        const target = displayEndpoint(cfg.otlp.endpoint);
        addPusher(
          name,
          target,
          otlpExporterKey(cfg.otlp.endpoint),
          (opts.otlpExporter ?? createOtlpExporter)(cfg),
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
        prometheusProducer = producer("prometheus", "cumulative", new DeliveryTracker());
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
    onExportFailure = (exporter) => health.exportFailures.add(1, { exporter });

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
    return new ExportPipeline(provider, pushers, endpoint, health, resource);
  }

  /** Counts one collection pass in the health metrics. */
  recordPass(pass: PassResult): void {
    if (!this.health) return;
    this.health.passes.add(1);
    const byCode = new Map<string, number>();
    for (const p of pass.problems) byCode.set(p.code, (byCode.get(p.code) ?? 0) + 1);
    for (const [code, n] of byCode) this.health.problems.add(n, { code });
  }

  /**
   * Collects and exports now, waits for delivery, and says which push destinations did not
   * receive it (nothing attempted = nothing to deliver = ok). Delta windows are bounded, so a
   * backlog is sent window after window until it is delivered or an export fails.
   */
  async flush(): Promise<FlushOutcome> {
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
    return failures.length === 0 ? { ok: true } : { ok: false, failures };
  }

  private watermarks(): string {
    return this.pushers.map((p) => p.producer.position()).join(";");
  }

  /**
   * Final flush, then the SDK in order: no export leaves after the judged flush (shutdown
   * would otherwise export once more), readers and exporters stop, the scrape server closes.
   */
  async shutdown(): Promise<FlushOutcome> {
    if (this.closed) return { ok: true };
    const outcome = await this.flush();
    this.closed = true;
    for (const p of this.pushers) p.exporter.seal();
    await this.provider?.shutdown();
    await this.prometheus?.close();
    return outcome;
  }
}
