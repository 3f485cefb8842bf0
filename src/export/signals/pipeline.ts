/**
 * The events (OTLP logs) and traces side of `cline-otel run`: one SignalShipper per configured
 * destination of each signal, each with its own watermark in the ledger, on its own schedule
 * (a timer that never overlaps itself), flushed and shut down in order with the metrics.
 * With both signals `none` (the default) nothing is built and nothing runs.
 */
import type { Resource } from "@opentelemetry/resources";
import type { ReadableLogRecord } from "@opentelemetry/sdk-logs";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import type { ProjectMode } from "../../config/config.ts";
import type { OtlpSettings } from "../../config/otlp.ts";
import type { SignalConfig, SignalsConfig } from "../../config/signals.ts";
import type { Ledger } from "../../ledger/ledger.ts";
import type { SignalKind, SignalRow } from "../../ledger/signals.ts";
import type { Logger } from "../../util/log.ts";
import { toLogRecord } from "../events/records.ts";
import type { DataAttributes } from "../team-attributes.ts";
import { toSpan } from "../traces/spans.ts";
import type { PriceLookup } from "../translate.ts";
import { createOtlpLogExporter, createOtlpSpanExporter } from "./otlp.ts";
import { type RecordSink, type ShipOutcome, SignalShipper } from "./shipper.ts";

export interface SignalPipelineOptions {
  readonly logger: Logger;
  readonly priceOf: PriceLookup;
  readonly project: ProjectMode;
  readonly resource: Resource;
  readonly data?: DataAttributes | undefined;
  readonly serviceVersion: string;
  readonly now?: () => number;
  /** Replace the SDK exporters (tests). */
  readonly logExporter?: (
    s: OtlpSettings,
  ) => RecordSink<ReadableLogRecord> | Promise<RecordSink<ReadableLogRecord>>;
  readonly spanExporter?: (s: OtlpSettings) => RecordSink<ReadableSpan> | Promise<RecordSink<ReadableSpan>>;
}

const LOG_KINDS: ReadonlySet<SignalKind> = new Set(["chat", "tool", "compaction", "edit"]);
const SPAN_KINDS: ReadonlySet<SignalKind> = new Set(["chat", "tool", "turn", "compaction"]);

/** Batches one flush sends at most (with 512 records each: a million records). */
const MAX_FLUSH_BATCHES = 2000;

export interface SignalFailure {
  readonly signal: string;
  /** `otlp` or `console`. */
  readonly exporter: string;
  readonly target: string;
  readonly reason: string;
}

interface Destination {
  readonly signal: "logs" | "traces";
  readonly exporter: string;
  readonly target: string;
  readonly shipper: SignalShipper<unknown>;
  readonly delayMs: number;
}

/** The key of a destination's watermark: signal, exporter and (for OTLP) the URL without credentials. */
export function signalExporterKey(signal: string, exporter: string, endpoint?: string): string {
  if (endpoint === undefined) return `${signal} ${exporter}`;
  const u = new URL(endpoint);
  return `${signal} ${exporter} ${u.protocol}//${u.host}${u.pathname}`;
}

function display(endpoint: string): string {
  const u = new URL(endpoint);
  return `${u.protocol}//${u.host}${u.pathname}`;
}

export class SignalPipeline {
  private timers: NodeJS.Timeout[] = [];
  private closed = false;

  private constructor(private readonly destinations: readonly Destination[]) {}

  /** Destinations, for the start-up log line. */
  describe(): string[] {
    return this.destinations.map((d) => `${d.signal} ${d.target}`);
  }

  get enabled(): boolean {
    return this.destinations.length > 0;
  }

  /**
   * The destinations of the configured signals. The SDK's log and span packages and the chosen
   * exporters are loaded here, only for a signal that is on (both are off by default).
   */
  static async create(
    cfg: SignalsConfig,
    ledger: Ledger,
    opts: SignalPipelineOptions,
  ): Promise<SignalPipeline> {
    const store = ledger.signals;
    const wanted = cfg.logs.exporters.length + cfg.traces.exporters.length;
    if (wanted === 0 || store === undefined) return new SignalPipeline([]);
    const now = opts.now ?? Date.now;
    // "now": records from the first enable on; the cursor keeps this time from its first use.
    const fromMs = cfg.from === "now" ? now() : 0;
    const scope = { name: "cline-otel", version: opts.serviceVersion };
    const recordCtx = {
      resource: opts.resource,
      scope,
      project: opts.project,
      priceOf: opts.priceOf,
      data: opts.data,
    };
    const destinations: Destination[] = [];
    const add = <T>(
      signal: "logs" | "traces",
      sc: SignalConfig,
      name: string,
      sink: RecordSink<T>,
      kinds: ReadonlySet<SignalKind>,
      build: (rows: readonly SignalRow[], observedMs: number) => T[],
    ) => {
      const endpoint = name === "otlp" ? sc.otlp?.endpoint : undefined;
      const target = endpoint === undefined ? "stdout" : display(endpoint);
      const shipper = new SignalShipper<T>(store, sink, {
        signal,
        exporterKey: signalExporterKey(signal, name, endpoint),
        target,
        kinds,
        maxBatchSize: sc.maxBatchSize,
        quietMs: cfg.quietMs,
        fromMs,
        build,
        logger: opts.logger,
        now,
        exportTimeoutMs: (sc.otlp?.timeoutMs ?? 10_000) * 3,
      });
      destinations.push({
        signal,
        exporter: name,
        target,
        shipper: shipper as SignalShipper<unknown>,
        delayMs: sc.scheduleDelayMs,
      });
    };
    for (const name of cfg.logs.exporters) {
      const sink: RecordSink<ReadableLogRecord> =
        name === "otlp" && cfg.logs.otlp
          ? await (opts.logExporter ?? createOtlpLogExporter)(cfg.logs.otlp)
          : new (await import("@opentelemetry/sdk-logs")).ConsoleLogRecordExporter();
      add("logs", cfg.logs, name, sink, LOG_KINDS, (rows, observedMs) =>
        rows.flatMap((r) => toLogRecord(r, recordCtx, observedMs) ?? []),
      );
    }
    for (const name of cfg.traces.exporters) {
      const sink: RecordSink<ReadableSpan> =
        name === "otlp" && cfg.traces.otlp
          ? await (opts.spanExporter ?? createOtlpSpanExporter)(cfg.traces.otlp)
          : new (await import("@opentelemetry/sdk-trace")).ConsoleSpanExporter();
      add("traces", cfg.traces, name, sink, SPAN_KINDS, (rows) => rows.map((r) => toSpan(r, recordCtx)));
    }
    return new SignalPipeline(destinations);
  }

  /** Starts the schedules: each destination sends one batch per tick (the rest next tick). */
  start(): void {
    if (this.closed) return;
    for (const d of this.destinations) {
      const t = setInterval(() => {
        d.shipper.tick();
      }, d.delayMs);
      t.unref();
      this.timers.push(t);
    }
  }

  /** Sends every backlog until it is delivered or an export fails; says which did not get through. */
  async flush(): Promise<{ ok: true } | { ok: false; failures: SignalFailure[] }> {
    if (this.closed) return { ok: true };
    const outcomes: ShipOutcome[] = await Promise.all(
      this.destinations.map((d) => d.shipper.ship(MAX_FLUSH_BATCHES)),
    );
    const failures: SignalFailure[] = [];
    outcomes.forEach((o, i) => {
      const d = this.destinations[i] as Destination;
      if (!o.ok)
        failures.push({ signal: d.signal, exporter: d.exporter, target: d.target, reason: o.reason });
    });
    return failures.length === 0 ? { ok: true } : { ok: false, failures };
  }

  /** No batch starts more than `ms` from now (a stop); what was acknowledged stays delivered. */
  stopWithin(ms: number): void {
    for (const d of this.destinations) d.shipper.stopWithin(ms);
  }

  /** Final flush, then nothing more leaves; exporters shut down. */
  async shutdown(): Promise<{ ok: true } | { ok: false; failures: SignalFailure[] }> {
    if (this.closed) return { ok: true };
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    const outcome = await this.flush();
    this.closed = true;
    for (const d of this.destinations) d.shipper.seal();
    await Promise.all(this.destinations.map((d) => d.shipper.shutdown()));
    return outcome;
  }
}
