import { describe, expect, it } from "vitest";
import { ledgerOpenOptions } from "../../src/cli/common.ts";
import { ConfigError, resolveConfig, resolveLocalConfig } from "../../src/config/config.ts";
import { resolveSignalsConfig } from "../../src/config/signals.ts";

const shared = { fileHeaders: { "x-file": "f" }, fileVia: "--headers-file (/h)", cwd: "/tmp" };
const resolve = (env: Record<string, string>, disabled = false) =>
  resolveSignalsConfig(env, shared, disabled);

describe("events and traces configuration", () => {
  it("is off by default, with the SDK's schedule defaults", () => {
    const c = resolve({});
    expect(c.logs).toEqual({ exporters: [], otlp: undefined, scheduleDelayMs: 1000, maxBatchSize: 512 });
    expect(c.traces).toEqual({ exporters: [], otlp: undefined, scheduleDelayMs: 5000, maxBatchSize: 512 });
    expect(c.quietMs).toBe(900_000);
    expect(c.from).toBe("history");
    expect(Object.isFrozen(c) && Object.isFrozen(c.logs)).toBe(true);
  });

  it("resolves each signal's OTLP settings only when asked for, per-signal variables first", () => {
    const c = resolve({
      OTEL_LOGS_EXPORTER: "otlp,console",
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://tempo:4318/v1/traces",
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_LOGS_HEADERS: "x-logs=1",
    });
    expect(c.logs.exporters).toEqual(["otlp", "console"]);
    expect(c.logs.otlp?.endpoint).toBe("http://collector:4318/v1/logs");
    expect(c.logs.otlp?.headers).toEqual({ "x-logs": "1", "x-file": "f" });
    expect(c.traces.otlp).toMatchObject({ endpoint: "http://tempo:4318/v1/traces", protocol: "http/json" });
  });

  it("none, OTEL_SDK_DISABLED and bad values", () => {
    expect(resolve({ OTEL_LOGS_EXPORTER: "otlp,none" }).logs.exporters).toEqual([]);
    expect(resolve({ OTEL_LOGS_EXPORTER: "otlp" }, true).logs.exporters).toEqual([]);
    expect(() => resolve({ OTEL_TRACES_EXPORTER: "jaeger" })).toThrow(ConfigError);
    expect(() => resolve({ OTEL_TRACES_EXPORTER: "jaeger" })).toThrow(/OTEL_TRACES_EXPORTER/);
    expect(() => resolve({ OTEL_BLRP_MAX_EXPORT_BATCH_SIZE: "5000" })).toThrow(
      /OTEL_BLRP_MAX_EXPORT_BATCH_SIZE/,
    );
    expect(() => resolve({ CLINE_OTEL_SIGNALS_FROM: "yesterday" })).toThrow(/CLINE_OTEL_SIGNALS_FROM/);
    expect(() => resolve({ CLINE_OTEL_QUIET_TIME: "-1" })).toThrow(/CLINE_OTEL_QUIET_TIME/);
    const c = resolve({
      CLINE_OTEL_QUIET_TIME: "60",
      CLINE_OTEL_SIGNALS_FROM: "now",
      OTEL_BSP_SCHEDULE_DELAY: "250",
    });
    expect([c.quietMs, c.from, c.traces.scheduleDelayMs]).toEqual([60_000, "now", 250]);
  });
});

describe("the quiet time reaches every writer", () => {
  it("`report` (the local configuration) opens its ledger with the exporters' quiet time", () => {
    for (const [env, ms] of [
      [{}, 900_000],
      [{ CLINE_OTEL_QUIET_TIME: "60" }, 60_000],
    ] as const) {
      const full = resolveConfig({ stateDir: "/tmp/st" }, env, "/home/u", "/tmp");
      const local = resolveLocalConfig({ stateDir: "/tmp/st" }, env, "/home/u", "/tmp");
      expect([local.quietMs, full.quietMs, full.export.signals.quietMs]).toEqual([ms, ms, ms]);
      expect(ledgerOpenOptions(local, {}).quietMs).toBe(ms);
    }
    expect(() =>
      resolveLocalConfig({ stateDir: "/tmp/st" }, { CLINE_OTEL_QUIET_TIME: "0" }, "/home/u", "/tmp"),
    ).toThrow(/CLINE_OTEL_QUIET_TIME/);
  });
});
