import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  compareMetrics,
  fixtureEnv,
  type GroundTruthRecord,
  type LoadedGroundTruth,
  messageDocuments,
  relativeEnv,
  storedMetrics,
  toFixturePath,
  totalsOf,
} from "../../fixtures/harness/ground-truth.ts";
import { clineCost } from "../../fixtures/harness/scenarios.ts";

const rec = (i: number, o: number, r: number, w: number, expectedCost?: number): GroundTruthRecord => ({
  route: "a",
  turn: 0,
  protocol: "anthropic",
  model: "m",
  wire: {
    message_start: {
      input_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 1,
    },
    message_delta: { output_tokens: o },
  },
  expected: { inputTokens: i, outputTokens: o, cacheReadTokens: r, cacheWriteTokens: w },
  ...(expectedCost !== undefined ? { expectedCost } : {}),
});

const stored = (i: number, o: number, r: number, w: number, cost?: number) => ({
  inputTokens: i,
  outputTokens: o,
  cacheReadTokens: r,
  cacheWriteTokens: w,
  ...(cost !== undefined ? { cost } : {}),
  file: "f",
  messageId: `msg_${i}`,
});

describe("clineCost (docs/cline-format.md §11)", () => {
  it("reproduces the documented Anthropic example", () => {
    const m = { inputTokens: 7952, outputTokens: 323, cacheReadTokens: 7002, cacheWriteTokens: 729 };
    expect(clineCost(m, { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 })).toBeCloseTo(
      0.01034235,
      12,
    );
  });
});

describe("totalsOf", () => {
  it("sums expected metrics, counts records and adds cost only when priced", () => {
    expect(totalsOf([rec(10, 2, 3, 4), rec(20, 5, 0, 0)])).toEqual({
      inputTokens: 30,
      outputTokens: 7,
      cacheReadTokens: 3,
      cacheWriteTokens: 4,
      requests: 2,
    });
    expect(totalsOf([rec(1, 1, 0, 0, 0.5), rec(2, 2, 0, 0, 0.25)]).cost).toBe(0.75);
  });
});

describe("compareMetrics", () => {
  it("accepts an exact one-to-one match, in any order, with costs within 1e-9", () => {
    expect(
      compareMetrics(
        [rec(1, 2, 0, 0), rec(3, 4, 1, 0, 0.1)],
        [stored(3, 4, 1, 0, 0.1 + 1e-17), stored(1, 2, 0, 0)],
      ),
    ).toEqual([]);
  });

  it("reports misses, extras (double counts) and cost problems", () => {
    const problems = compareMetrics(
      [rec(1, 2, 0, 0), rec(5, 6, 0, 0, 0.2), rec(7, 8, 0, 0)],
      [stored(5, 6, 0, 0, 0.3), stored(7, 8, 0, 0, 0.01), stored(7, 8, 0, 0)],
    );
    expect(problems).toHaveLength(4);
    expect(problems.join("\n")).toMatch(/has no stored message/);
    expect(problems.join("\n")).toMatch(/cost 0.3 != expected 0.2/);
    expect(problems.join("\n")).toMatch(/unexpected metrics.cost/);
    expect(problems.join("\n")).toMatch(/matches no record/);
  });
});

describe("paths", () => {
  const gt = {
    workRoot: "/tmp/w/s",
    fixtureRoot: "/repo/fixtures/cline/s",
    env: { HOME: "home", CLINE_CAPTURE_WIRE: "true", CLINE_SESSION_DATA_DIR: "custom" },
  } as unknown as LoadedGroundTruth;

  it("relativizes path variables and refuses paths outside the work root", () => {
    expect(relativeEnv({ HOME: "/tmp/w/s/home", CLINE_CAPTURE_WIRE: "true" }, "/tmp/w/s")).toEqual({
      HOME: "home",
      CLINE_CAPTURE_WIRE: "true",
    });
    expect(() => relativeEnv({ CLINE_DATA_DIR: "/elsewhere" }, "/tmp/w/s")).toThrow(/outside/);
  });

  it("maps the scenario env and recorded paths onto the committed copy", () => {
    expect(fixtureEnv(gt)).toEqual({
      HOME: "/repo/fixtures/cline/s/home",
      CLINE_CAPTURE_WIRE: "true",
      CLINE_SESSION_DATA_DIR: "/repo/fixtures/cline/s/custom",
    });
    expect(toFixturePath(gt, "/tmp/w/s/custom/1/1.messages.json")).toBe(
      "/repo/fixtures/cline/s/custom/1/1.messages.json",
    );
    expect(() => toFixturePath(gt, "/tmp/w/other")).toThrow(/not under/);
  });
});

describe("messageDocuments / storedMetrics", () => {
  it("finds documents recursively and reads assistant metrics only", () => {
    const dir = mkdtempSync(join(tmpdir(), "gt-test-"));
    try {
      mkdirSync(join(dir, "a"), { recursive: true });
      writeFileSync(join(dir, "a", "a.json"), "{}");
      writeFileSync(
        join(dir, "a", "x.messages.json"),
        JSON.stringify({
          messages: [
            { id: "u", role: "user", metrics: { inputTokens: 99 } },
            { id: "m1", role: "assistant", metrics: { inputTokens: 5, outputTokens: 1, cost: 0.5 } },
            { id: "e", role: "assistant", metadata: { displayOnly: true } },
          ],
        }),
      );
      const docs = messageDocuments(dir);
      expect(docs).toEqual([join(dir, "a", "x.messages.json")]);
      expect(storedMetrics(docs)).toEqual([
        {
          inputTokens: 5,
          outputTokens: 1,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          cost: 0.5,
          file: docs[0],
          messageId: "m1",
        },
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
