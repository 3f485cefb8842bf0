import { describe, expect, it } from "vitest";
import {
  chatStartMs,
  documentQuiet,
  durationMs,
  toolCallEnd,
  toolOutcome,
  turnClosed,
  validTs,
} from "../../src/adapter/timing.ts";

describe("chatStartMs: the latest ts among the messages before a request", () => {
  const table: [string, number[], number][] = [
    ["first message of a document", [], 0],
    ["after the prompt", [1000], 1000],
    ["after a prompt and its tool result", [1000, 1500, 1700], 1700],
    // Parallel calls: results are stored in call order, but finish in any order (docs/cline-format.md §12).
    ["parallel tool results out of ts order", [1000, 1500, 1900, 1600, 1750], 1900],
    ["unknown times (0) are ignored", [1000, 0, 0], 1000],
    ["nothing known", [0, 0], 0],
  ];
  for (const [name, earlier, want] of table) it(name, () => expect(chatStartMs(earlier)).toBe(want));
});

describe("validTs", () => {
  const table: [unknown, number][] = [
    [1796018200592, 1796018200592],
    [1796018200592.7, 1796018200592],
    [0, 0],
    [-5, 0],
    [Number.NaN, 0],
    [Number.POSITIVE_INFINITY, 0],
    // Past a Date's range: not a time, and not a safe integer for the ledger (issue 28).
    [1e300, 0],
    [8.64e15 + 2, 0],
    [8.64e15, 8.64e15],
    [0.5, 0],
    ["1796018200592", 0],
    [undefined, 0],
  ];
  for (const [v, want] of table) it(`${String(v)} -> ${want}`, () => expect(validTs(v)).toBe(want));
});

describe("durationMs", () => {
  const table: [number, number, number | undefined][] = [
    [1000, 1250, 250],
    [1000, 1000, 0],
    [0, 1250, undefined],
    [1000, 0, undefined],
    [1300, 1250, undefined],
  ];
  for (const [a, b, want] of table) it(`${a}..${b}`, () => expect(durationMs(a, b)).toBe(want));
});

describe("toolOutcome: from is_error only", () => {
  it("maps the flag", () => {
    expect(toolOutcome(true)).toBe("failure");
    expect(toolOutcome(false)).toBe("success");
    expect(toolOutcome(null)).toBe("unknown");
  });
});

describe("toolCallEnd", () => {
  const QUIET = 600_000;
  const call = { startMs: 1_000_000, documentLastTsMs: 1_000_500 };
  const table: [string, Parameters<typeof toolCallEnd>[1], number, ReturnType<typeof toolCallEnd>][] = [
    [
      "result on disk: ends at the result message's ts",
      { timestampMs: 1_002_000, isError: false },
      1_002_001,
      { final: true, endMs: 1_002_000, outcome: "success", cancelled: false },
    ],
    [
      "failed result",
      { timestampMs: 1_002_000, isError: true },
      1_002_001,
      { final: true, endMs: 1_002_000, outcome: "failure", cancelled: false },
    ],
    ["no result, document still active: still running", undefined, 1_000_500 + QUIET - 1, { final: false }],
    [
      "no result, document quiet: cancelled at the document's last ts",
      undefined,
      1_000_500 + QUIET,
      { final: true, endMs: 1_000_500, outcome: "unknown", cancelled: true },
    ],
  ];
  for (const [name, result, now, want] of table)
    it(name, () => expect(toolCallEnd(call, result, now, QUIET)).toEqual(want));

  it("a cancelled call never ends before it started", () => {
    expect(toolCallEnd({ startMs: 2000, documentLastTsMs: 1500 }, undefined, 10_000_000, QUIET)).toEqual({
      final: true,
      endMs: 2000,
      outcome: "unknown",
      cancelled: true,
    });
  });
});

describe("documentQuiet / turnClosed", () => {
  it("judges by the document's last ts", () => {
    expect(documentQuiet(1000, 1999, 1000)).toBe(false);
    expect(documentQuiet(1000, 2000, 1000)).toBe(true);
    expect(documentQuiet(0, 1, 1000)).toBe(true);
    expect(turnClosed(true, 1000, 1001, 1000)).toBe(true);
    expect(turnClosed(false, 1000, 1001, 1000)).toBe(false);
    expect(turnClosed(false, 1000, 2000, 1000)).toBe(true);
  });
});
