/**
 * cline.tool.calls by cline.tool.outcome, counted once a call is final (docs/metrics.md "Tool
 * outcome"), and cline.tool.duration under delta temporality: through a real ledger, the real
 * producer and the SDK's reader, cumulative and delta, across later reads, the quiet time,
 * refused exports, restarts, rolled-back transactions and an upgrade from the schema before it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DataPoint, Histogram } from "@opentelemetry/sdk-metrics";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToolCall, ToolResult } from "../../src/adapter/types.ts";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import { call, docSignals, event, observation, result } from "../helpers/events.ts";
import { fillLedger } from "./helpers/ledger.ts";
import { type Harness, harness } from "./helpers/sdk.ts";

const T = 1_796_000_000_000;
const QUIET = 900_000;
const CALLS = "cline.tool.calls";
const DURATION = "cline.tool.duration";

let dir: string;
let clock: number;
let l: Ledger;
const open: Harness[] = [];
const now = () => clock;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "tool-outcomes-"));
  clock = T + 10_000;
  l = Ledger.open(dir, { now });
});
afterEach(async () => {
  for (const h of open.splice(0)) await h.shutdown();
  l.close();
  rmSync(dir, { recursive: true, force: true });
});
const track = (h: Harness): Harness => {
  open.push(h);
  return h;
};
const reopen = (): Ledger => {
  l.close();
  l = Ledger.open(dir, { now });
  return l;
};

/** Calls of one message (its metrics known), each `i` seconds after it. */
const paying = event("m1", { toolCallCount: 4, timestampMs: T });
const calls: ToolCall[] = [
  call("c1", paying.dedupKey, 4, { timestampMs: T, toolUseId: "c1" }),
  call("c2", paying.dedupKey, 4, { timestampMs: T, toolUseId: "c2" }),
  call("c3", paying.dedupKey, 4, { timestampMs: T, toolUseId: "c3", toolName: "read_files" }),
  call("c4", paying.dedupKey, 4, { timestampMs: T, toolUseId: "c4", toolName: "editor" }),
];
const [c1, c2, c3, c4] = calls as [ToolCall, ToolCall, ToolCall, ToolCall];

/** One read of the document: every call, the results on disk so far, its last ts. */
function read(results: readonly ToolResult[], size: number) {
  const last = Math.max(T + 2_000, ...results.map((r) => r.timestampMs));
  return observation([paying], calls, size, undefined, docSignals(results, { lastTsMs: last }));
}
const r1 = result(c1, false, 300); // success after 0.3 s
const r2 = result(c2, true, 1_500); // failure after 1.5 s
const r3 = result(c3, false, 45_000); // success, but read later

type Counts = Record<string, number>;
/** Values by outcome (optionally by tool too) of a set of points. */
function byOutcome(points: readonly DataPoint<number>[], withTool = false): Counts {
  const out: Counts = {};
  for (const p of points) {
    const k = `${withTool ? `${String(p.attributes["gen_ai.tool.name"])}/` : ""}${String(p.attributes["cline.tool.outcome"])}`;
    out[k] = (out[k] ?? 0) + p.value;
  }
  return out;
}
/** Histogram counts by outcome, and the bucket counts summed, of a set of points. */
function histByOutcome(points: readonly DataPoint<number>[]): { counts: Counts; buckets: number[] } {
  const counts: Counts = {};
  const buckets: number[] = [];
  for (const p of points as unknown as DataPoint<Histogram>[]) {
    const k = String(p.attributes["cline.tool.outcome"]);
    counts[k] = (counts[k] ?? 0) + p.value.count;
    p.value.buckets.counts.forEach((c, i) => {
      buckets[i] = (buckets[i] ?? 0) + c;
    });
  }
  return { counts, buckets };
}
/** The final calls of the ledger, straight from their records (ground truth). */
function queued(): Counts {
  const db = new Database(join(dir, LEDGER_FILE), { readonly: true });
  try {
    const rows = db
      .prepare("SELECT outcome, COUNT(*) AS n FROM tool_calls WHERE signal_seq IS NOT NULL GROUP BY outcome")
      .all() as { outcome: string; n: number }[];
    return Object.fromEntries(rows.map((r) => [r.outcome, r.n]));
  } finally {
    db.close();
  }
}

describe("cline.tool.calls counts a call once it is final, by outcome (cumulative)", () => {
  it("success and failure when their result is read; later results later; unknown after the quiet time", async () => {
    const h = track(harness(l, { now, quietMs: QUIET }));
    l.commit(read([r1, r2], 100));
    await h.flush();
    // c3 and c4 have no result yet: not counted (a counter could not move them to success later).
    expect(byOutcome(h.lastPoints(CALLS), true)).toEqual({
      "run_commands/success": 1,
      "run_commands/failure": 1,
    });
    // Their tokens are attributed when the calls are first read, as before.
    const tokens = h.lastPoints("cline.tool.token.usage").filter((p) => p.attributes.type === "input");
    expect(tokens.reduce((a, p) => a + p.value, 0)).toBeCloseTo(paying.input, 9);

    // The next read has c3's result: counted now, once, however often the document is read again.
    l.commit(read([r1, r2, r3], 200));
    l.commit(read([r1, r2, r3], 300));
    await h.flush();
    expect(byOutcome(h.lastPoints(CALLS), true)).toEqual({
      "run_commands/success": 1,
      "run_commands/failure": 1,
      "read_files/success": 1,
    });

    // c4 never gets a result: once the document is quiet it is final, outcome unknown.
    clock = T + 45_000 + QUIET - 1;
    await h.flush();
    expect(byOutcome(h.lastPoints(CALLS))).toEqual({ success: 2, failure: 1 });
    clock = T + 45_000 + QUIET;
    await h.flush();
    expect(byOutcome(h.lastPoints(CALLS), true)).toEqual({
      "run_commands/success": 1,
      "run_commands/failure": 1,
      "read_files/success": 1,
      "editor/unknown": 1,
    });
    // A result that turns up after the quiet time changes nothing: the call was final.
    l.commit(read([r1, r2, r3, result(c4, false, 50_000)], 400));
    await h.flush();
    expect(byOutcome(h.lastPoints(CALLS))).toEqual({ success: 2, failure: 1, unknown: 1 });
    expect(byOutcome(h.lastPoints(CALLS))).toEqual(queued());
    // Every point keeps the other attributes of the call's series.
    for (const p of h.lastPoints(CALLS)) {
      expect(p.attributes).toMatchObject({
        "session.id": "s1",
        "cline.agent": "lead",
        "cline.project": "/work/ws",
        "gen_ai.request.model": "m1",
        "gen_ai.provider.name": "p1",
        "cline.usage.known": "true",
      });
    }
    // cline.tool.duration has the same calls (each has a time) in the same outcomes.
    expect(histByOutcome(h.lastPoints(DURATION)).counts).toEqual({ success: 2, failure: 1, unknown: 1 });
  });

  it("the series and the queue commit together: a rolled-back transaction counts nothing", async () => {
    l.commit(read([r1], 100));
    expect(() =>
      l.transaction(() => {
        l.commit(read([r1, r2, r3], 200));
        expect(l.signals?.toolOutcomes.series().reduce((a, r) => a + r.calls, 0)).toBe(3);
        throw new Error("crash before the commit");
      }),
    ).toThrow("crash before the commit");
    expect(l.signals?.toolOutcomes.series().reduce((a, r) => a + r.calls, 0)).toBe(1);
    // The same for the quiet-time finalization.
    expect(() =>
      l.transaction(() => {
        l.signals?.finalizeQuiet(T + 10 * QUIET, QUIET);
        throw new Error("crash before the commit");
      }),
    ).toThrow();
    expect(queued()).toEqual({ success: 1 });
    expect(l.signals?.toolOutcomes.series().reduce((a, r) => a + r.calls, 0)).toBe(1);
    // Read again after the "crash": counted exactly once.
    l.commit(read([r1, r2, r3], 200));
    const h = track(harness(l, { now }));
    await h.flush();
    expect(byOutcome(h.lastPoints(CALLS))).toEqual({ success: 2, failure: 1 });
  });

  it("paged cumulative exports carry each outcome series once per collection", async () => {
    fillLedger(l, { sessions: 40 });
    const h = track(harness(l, { now, pagePoints: 6 }));
    await h.flush();
    const pts = h.lastPoints(CALLS);
    const keys = pts.map((p) => JSON.stringify(Object.entries(p.attributes).sort()));
    expect(new Set(keys).size).toBe(keys.length);
    expect(byOutcome(pts)).toEqual(queued());
    expect(pts.reduce((a, p) => a + p.value, 0)).toBe(l.counts().calls);
  });
});

describe("delta temporality: the final calls of each window, exactly once", () => {
  it("by outcome, with cline.tool.duration; refused exports, restarts and small windows send each call once", async () => {
    let h = track(harness(l, { temporality: "delta", now, quietMs: QUIET, maxWindowCalls: 1 }));
    l.commit(read([r1, r2], 100));
    // A crash inside the transaction that would make c3 final: its queue row is rolled back with it,
    // so no window can carry it (and the next read makes it final once).
    expect(() =>
      l.transaction(() => {
        l.commit(read([r1, r2, r3], 150));
        throw new Error("crash");
      }),
    ).toThrow("crash");
    await h.flush();
    await h.flush();
    expect(byOutcome(h.allPoints(CALLS), true)).toEqual({
      "run_commands/success": 1,
      "run_commands/failure": 1,
    });
    // A collector that refuses: nothing is committed, the window is sent again next time.
    h.scripted.fail = true;
    l.commit(read([r1, r2, r3], 200));
    await h.flush();
    await h.flush();
    h.scripted.fail = false;
    for (let i = 0; i < 4; i++) await h.flush();
    const delivered = [...h.allPoints(CALLS)];
    const durations = [...h.allPoints(DURATION)];
    // A restart (new process, same ledger) continues from the committed watermark.
    await h.shutdown();
    open.splice(open.indexOf(h), 1);
    h = track(harness(reopen(), { temporality: "delta", now, quietMs: QUIET, maxWindowCalls: 1 }));
    clock = T + 45_000 + QUIET;
    for (let i = 0; i < 3; i++) await h.flush();
    delivered.push(...h.allPoints(CALLS));
    durations.push(...h.allPoints(DURATION));
    // What the backend received (the scripted exporter keeps successful exports only).
    expect(byOutcome(delivered, true)).toEqual({
      "run_commands/success": 1,
      "run_commands/failure": 1,
      "read_files/success": 1,
      "editor/unknown": 1,
    });
    const hist = histByOutcome(durations);
    expect(hist.counts).toEqual({ success: 2, failure: 1, unknown: 1 });
    // The delta windows add up to the cumulative histograms, bucket for bucket.
    const cumulative = track(harness(l, { now, exporter: "cumulative" }));
    await cumulative.flush();
    const all = histByOutcome(cumulative.lastPoints(DURATION));
    expect(hist).toEqual(all);
    expect(byOutcome(delivered)).toEqual(byOutcome(cumulative.lastPoints(CALLS)));
    // Each point is a delta over one window: one call per window here.
    for (const p of delivered) expect(p.value).toBe(1);
    expect(l.getExportState("memory").finalCallWatermark).toBeGreaterThan(0);
    expect(h.producer.backlog()).toBe(false);
  });

  it("a large backlog drains in bounded windows, every call once", async () => {
    const filled = fillLedger(l, { sessions: 30 });
    const h = track(harness(l, { temporality: "delta", now, maxWindowCalls: 7 }));
    let rounds = 0;
    do {
      await h.flush();
      rounds++;
    } while (h.producer.backlog() && rounds < 100);
    expect(rounds).toBeGreaterThan(filled.calls / 7 - 1);
    expect(h.allPoints(CALLS).reduce((a, p) => a + p.value, 0)).toBe(filled.calls);
    expect(byOutcome(h.allPoints(CALLS))).toEqual(queued());
    expect(histByOutcome(h.allPoints(DURATION)).counts).toEqual(queued());
  });
});
