import { describe, expect, it } from "vitest";
import { applyCacheRule } from "../../../src/adapter/cline/cache-rule.ts";

const m = (inputTokens: number, outputTokens: number, cacheReadTokens: number, cacheWriteTokens: number) => ({
  inputTokens,
  outputTokens,
  cacheReadTokens,
  cacheWriteTokens,
});

describe("applyCacheRule", () => {
  it.each([
    // name, metrics, [input, output, cacheRead, cacheWrite, total], branch
    [
      "anthropic-style: cache inside input (docs/cline-format.md §4.5)",
      m(7952, 323, 7002, 729),
      [221, 323, 7002, 729, 8275],
      "subset",
    ],
    ["openai-style: cached inside prompt", m(12007, 40, 4205, 0), [7802, 40, 4205, 0, 12047], "subset"],
    ["no cache", m(100, 5, 0, 0), [100, 5, 0, 0, 105], "subset"],
    ["exactly equal is still a subset", m(50, 1, 30, 20), [0, 1, 30, 20, 51], "subset"],
    ["cache larger than input: additive", m(221, 323, 7002, 729), [221, 323, 7002, 729, 8275], "additive"],
    ["one more than fits: additive", m(49, 1, 30, 20), [49, 1, 30, 20, 100], "additive"],
    ["all zero", m(0, 0, 0, 0), [0, 0, 0, 0, 0], "subset"],
  ] as const)("%s", (_name, metrics, want, branch) => {
    const c = applyCacheRule(metrics);
    expect([c.input, c.output, c.cacheRead, c.cacheWrite, c.total]).toEqual(want);
    expect(c.cacheBranch).toBe(branch);
  });

  it("the four components always sum to the stored total", () => {
    for (let i = 0; i < 2000; i++) {
      const r = () => Math.floor(Math.random() * 10_000);
      const c = applyCacheRule(m(r(), r(), r(), r()));
      expect(c.input + c.output + c.cacheRead + c.cacheWrite).toBe(c.total);
      expect(c.input).toBeGreaterThanOrEqual(0);
    }
  });
});
