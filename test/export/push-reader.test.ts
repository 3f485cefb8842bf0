/**
 * The push exporters' reader (src/export/push-reader.ts): an export that takes longer than the
 * interval is never cut and never joined by a second one; after it ends the next tick waits;
 * shutdown waits for the export in flight and exports nothing more.
 */
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import { MeterProvider, type PushMetricExporter, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { afterEach, describe, expect, it } from "vitest";
import { PushReader } from "../../src/export/push-reader.ts";
import { createLogger } from "../../src/util/log.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Answers each export after `ms`, counting exports and the most in flight at once. */
class SlowExporter implements PushMetricExporter {
  inFlight = 0;
  maxInFlight = 0;
  exports = 0;
  ends: number[] = [];
  starts: number[] = [];
  constructor(private readonly ms: number) {}
  export(_m: ResourceMetrics, cb: (r: ExportResult) => void): void {
    this.exports++;
    this.inFlight++;
    this.starts.push(performance.now());
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    setTimeout(() => {
      this.inFlight--;
      this.ends.push(performance.now());
      cb({ code: ExportResultCode.SUCCESS });
    }, this.ms);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const providers: MeterProvider[] = [];
afterEach(async () => {
  for (const p of providers.splice(0)) await p.shutdown();
});

function setup(exportMs: number, intervalMs: number) {
  const exporter = new SlowExporter(exportMs);
  const logs: string[] = [];
  const reader = new PushReader({
    exporter,
    intervalMs,
    metricProducers: [],
    logger: createLogger("debug", (l) => logs.push(l)),
    target: "slow",
  });
  const provider = new MeterProvider({ readers: [reader] });
  providers.push(provider);
  provider.getMeter("t").createCounter("c").add(1);
  return { exporter, provider, logs };
}

describe("PushReader", () => {
  it("an export longer than the interval: one in flight, never back to back, the skipped ticks logged", async () => {
    const { exporter, logs } = setup(250, 100);
    await sleep(1300);
    expect(exporter.maxInFlight).toBe(1);
    expect(exporter.exports).toBeGreaterThanOrEqual(2);
    // Each export starts at least half an interval after the previous one ended.
    for (let i = 1; i < exporter.starts.length; i++) {
      expect((exporter.starts[i] as number) - (exporter.ends[i - 1] as number)).toBeGreaterThanOrEqual(45);
    }
    expect(logs.some((l) => l.includes("still running: this interval's export is skipped"))).toBe(true);
  });

  it("forceFlush waits for the export in flight, then runs its own; shutdown waits and exports nothing more", async () => {
    const { exporter, provider } = setup(200, 100);
    await sleep(150); // the first tick's export is in flight
    expect(exporter.inFlight).toBe(1);
    await provider.forceFlush();
    expect(exporter.exports).toBe(2);
    expect(exporter.maxInFlight).toBe(1);
    await sleep(120);
    const started = exporter.exports;
    await provider.shutdown();
    providers.length = 0;
    expect(exporter.inFlight).toBe(0);
    expect(exporter.exports).toBe(started);
  });
});
