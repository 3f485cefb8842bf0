import { describe, expect, it } from "vitest";
import { costOfEvent } from "../../src/cost/policy.ts";
import { catalogPriceTable } from "../../src/cost/prices.ts";

const table = catalogPriceTable();

describe("costOfEvent", () => {
  it("prices a known model in USD and says how the price was found", () => {
    const r = costOfEvent(table, {
      provider: "anthropic",
      model: "claude-sonnet-4-5-20250929",
      input: 221,
      output: 323,
      cacheRead: 7002,
      cacheWrite: 729,
    });
    expect("usd" in r && r.via).toBe("exact");
    expect("usd" in r && Math.abs(r.usd - 0.01034235) / 0.01034235).toBeLessThan(1e-12);
  });

  it("reports an unknown model as unknown, not as zero", () => {
    const r = costOfEvent(table, {
      provider: "openai-compatible",
      model: "mock-model",
      input: 1000,
      output: 10,
      cacheRead: 0,
      cacheWrite: 0,
    });
    expect(r).toEqual({ unknown: true });
  });

  it("reports an event without a model as unknown", () => {
    const r = costOfEvent(table, {
      provider: "",
      model: "",
      input: 1,
      output: 1,
      cacheRead: 0,
      cacheWrite: 0,
    });
    expect(r).toEqual({ unknown: true });
  });

  it("reports Cline's free models as a known zero", () => {
    const r = costOfEvent(table, {
      provider: "cline-pass",
      model: "cline-pass/anything",
      input: 1000,
      output: 10,
      cacheRead: 0,
      cacheWrite: 0,
    });
    expect(r).toEqual({ usd: 0, via: "cline-free" });
  });
});
