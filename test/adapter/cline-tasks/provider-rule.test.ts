import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  PROVIDER_RULES,
  recordsDollarCost,
  taskComponents,
} from "../../../src/adapter/cline-tasks/provider-rule.ts";
import { ROOT } from "../../helpers/cli.ts";

const t = (tokensIn: number, tokensOut: number, cacheReads: number, cacheWrites: number) => ({
  tokensIn,
  tokensOut,
  cacheReads,
  cacheWrites,
});

describe("provider rule of the task format", () => {
  it("includes: the cache counts come out of tokensIn; excludes: they are added", () => {
    expect(taskComponents("openai", t(100, 5, 30, 10))).toMatchObject({
      input: 60,
      total: 105,
      cacheBranch: "subset",
    });
    expect(taskComponents("anthropic", t(100, 5, 30, 10))).toMatchObject({
      input: 100,
      total: 145,
      cacheBranch: "additive",
    });
    expect(taskComponents("openai", t(10, 5, 30, 0))).toMatchObject({
      input: 10,
      total: 45,
      anomaly: "cache-exceeds-input",
    });
  });

  it("an unknown provider, or cache where none is reported, never double counts and is flagged", () => {
    expect(taskComponents("brand-new", t(100, 5, 30, 0))).toMatchObject({
      input: 70,
      total: 105,
      anomaly: "unknown-provider",
    });
    expect(taskComponents("brand-new", t(10, 5, 30, 0))).toMatchObject({
      input: 10,
      total: 45,
      anomaly: "unknown-provider",
    });
    expect(taskComponents("ollama", t(100, 5, 0, 0))).toEqual({
      input: 100,
      output: 5,
      cacheRead: 0,
      cacheWrite: 0,
      total: 105,
      cacheBranch: "subset",
    });
    expect(taskComponents("ollama", t(100, 5, 1, 0)).anomaly).toBe("unexpected-cache");
    expect(taskComponents("__proto__", t(1, 1, 0, 0)).anomaly).toBe("unknown-provider");
  });

  it("asksage: tokensOut 0 means the monthly running total was stored: not counted, reported", () => {
    expect(taskComponents("asksage", t(90_017, 0, 0, 0))).toMatchObject({
      input: 0,
      output: 0,
      total: 0,
      anomaly: "running-total",
    });
    expect(taskComponents("asksage", t(2029, 119, 0, 0))).toMatchObject({ input: 2029, total: 2148 });
    expect(taskComponents("asksage", t(2029, 119, 0, 0)).anomaly).toBeUndefined();
    // Elsewhere a request without output keeps its input.
    expect(taskComponents("ollama", t(90_017, 0, 0, 0))).toMatchObject({ input: 90_017 });
    expect([recordsDollarCost("asksage"), recordsDollarCost("openai-native")]).toEqual([false, true]);
  });

  it("every provider of the table is documented with its rule in docs/cline-format.md §15.5", () => {
    const doc = readFileSync(join(ROOT, "docs/cline-format.md"), "utf8");
    const section = doc.slice(doc.indexOf("### 15.5"), doc.indexOf("### 15.6"));
    const rows = section.split("\n").filter((l) => /^\| (includes|excludes|none) \|/.test(l));
    for (const [id, rule] of Object.entries(PROVIDER_RULES)) {
      const row = rows.find((r) => r.includes(`\`${id}\``));
      expect(row, id).toBeDefined();
      expect(row?.startsWith(`| ${rule} |`), id).toBe(true);
    }
  });
});
