/**
 * Which of Cline's own metric names become one of ours in Prometheus (docs/backends.md "Cline's own
 * OpenTelemetry export"). The translation (test/helpers/cline-own-export.ts, otlptranslator's rule
 * with suffixes) must reproduce our whole contract first; then the names both producers end up with
 * are exactly the ones the docs name. A new collision (ours or Cline's) fails here until documented.
 */
import { describe, expect, it } from "vitest";
import { clinePrometheusNames, otlpToPrometheus } from "../helpers/cline-own-export.ts";
import { COUNTER_NAMES, COUNTERS, HEALTH_COUNTERS, HISTOGRAMS } from "./support/contract.ts";

describe("Cline's own metric names in Prometheus", () => {
  it("the translation gives our contract's Prometheus names from our OTLP names", () => {
    for (const [otel, prom] of Object.entries({ ...COUNTERS, ...HEALTH_COUNTERS }))
      expect(otlpToPrometheus(otel, "counter"), otel).toEqual([prom]);
    for (const [otel, base] of Object.entries(HISTOGRAMS))
      expect(otlpToPrometheus(otel, "histogram"), otel).toEqual([
        `${base}_bucket`,
        `${base}_sum`,
        `${base}_count`,
      ]);
    // `total` is not doubled, wherever it stands.
    expect(otlpToPrometheus("cline.tool.calls.total", "counter")).toEqual(["cline_tool_calls_total"]);
    expect(otlpToPrometheus("a.total.b", "counter")).toEqual(["a_b_total"]);
  });

  it("only cline.tool.calls.total becomes one of ours: cline_tool_calls_total (our cline.tool.calls)", () => {
    const theirs = clinePrometheusNames();
    expect(theirs.length).toBeGreaterThan(60);
    expect(theirs.filter((n) => COUNTER_NAMES.has(n))).toEqual(["cline_tool_calls_total"]);
    // Every other one is still a cline_* name: only the producer label tells a query they are not ours.
    expect(theirs.every((n) => n.startsWith("cline_"))).toBe(true);
  });
});
