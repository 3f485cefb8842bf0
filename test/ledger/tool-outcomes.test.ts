/**
 * The ledger side of cline.tool.calls by outcome (src/ledger/signals/tool-outcomes.ts): the running series
 * equal the final calls whatever the order of reads, results and quiet times; every delta window
 * partition adds up to them; and every read of the final calls is a seq range of their index
 * (never a scan of every call ever stored, which made each ingest transaction cost O(history)); the
 * cline.tool.duration rows equal the delta path's histograms of the same calls, bucket edges included.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { prng as rng } from "../../bench/lib/messages-doc.ts";
import type { ToolCall } from "../../src/adapter/types.ts";
import { TOOL_DURATION_BOUNDARIES } from "../../src/ledger/genai/genai.ts";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import type { GenaiSeriesRow } from "../../src/ledger/signals/signals.ts";
import { QUEUE_SQL, type ToolOutcomeRow } from "../../src/ledger/signals/tool-outcomes.ts";
import { call, docSignals, event, observation, result } from "../helpers/events.ts";

const T = 1_796_000_000_000;
const QUIET = 60_000;
let dir: string;
let l: Ledger;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "tool-outcomes-ledger-"));
  l = Ledger.open(dir, { now: () => T + 1 });
});
afterEach(() => {
  l.close();
  rmSync(dir, { recursive: true, force: true });
});

const key = (r: ToolOutcomeRow) => [r.sessionId, r.agent, r.toolName, r.usageKnown, r.outcome].join("|");
function totals(rows: readonly ToolOutcomeRow[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rows) out[key(r)] = (out[key(r)] ?? 0) + r.calls;
  return out;
}

describe("the outcome series and delta windows over the final calls", () => {
  it("series = queue, and any partition of the queue into windows sums to the series", () => {
    const next = rng(7);
    const sessions = ["s1", "s2", "s3"];
    // Per session document: calls seen so far, and the results written so far.
    const docs = new Map(
      sessions.map((s) => [s, { calls: [] as ToolCall[], results: new Map<string, boolean | null>() }]),
    );
    let n = 0;
    for (let step = 0; step < 120; step++) {
      const s = sessions[Math.floor(next() * sessions.length)] as string;
      const d = docs.get(s) as { calls: ToolCall[]; results: Map<string, boolean | null> };
      const r = next();
      if (r < 0.45 || d.calls.length === 0) {
        const e = event(`m${n}`, {
          sessionId: s,
          dedupKey: `cline|${s}|lead|m${n}`,
          timestampMs: T + n * 1000,
        });
        const known = next() < 0.8;
        d.calls.push(
          call(`c${n}`, known ? e.dedupKey : "", 1, {
            callKey: `cline|${s}|lead|c${n}`,
            sessionId: s,
            toolName: ["run_commands", "read_files", "editor"][n % 3] as string,
            timestampMs: T + n * 1000,
            sourcePath: `/s/${s}.json`,
          }),
        );
        n++;
        // Usually its result right away, else later (or never).
        if (next() < 0.6)
          d.results.set(`cline|${s}|lead|c${n - 1}`, next() < 0.25 ? true : next() < 0.1 ? null : false);
        const events = known ? [e] : [];
        commit(s, d, events, n);
      } else if (r < 0.8) {
        // A later read: results for some open calls.
        for (const c of d.calls)
          if (!d.results.has(c.callKey) && next() < 0.5) d.results.set(c.callKey, next() < 0.3);
        commit(s, d, [], n);
      } else {
        // Time passes: documents quiet for QUIET are over (their open calls: unknown).
        l.signals?.finalizeQuiet(T + n * 1000 + QUIET * (next() < 0.5 ? 0.5 : 2), QUIET);
      }
    }
    l.signals?.finalizeQuiet(T + n * 1000 + 10 * QUIET, QUIET);
    const outcomes = l.signals?.toolOutcomes;
    if (outcomes === undefined) throw new Error("a writer has signals");
    const series = totals(outcomes.series());
    // Ground truth from the calls' records themselves.
    const db = new Database(join(dir, LEDGER_FILE), { readonly: true });
    const truth: Record<string, number> = {};
    for (const row of db
      .prepare(
        `SELECT session_id AS sessionId, agent, tool_name AS toolName, first_known = 1 AS usageKnown,
           outcome, COUNT(*) AS calls FROM tool_calls WHERE signal_seq IS NOT NULL GROUP BY 1, 2, 3, 4, 5`,
      )
      .all() as (Omit<ToolOutcomeRow, "usageKnown"> & { usageKnown: number })[])
      truth[key({ ...row, usageKnown: row.usageKnown === 1 })] = row.calls;
    const allCalls = (db.prepare("SELECT COUNT(*) AS n FROM tool_calls").get() as { n: number }).n;
    db.close();
    expect(series).toEqual(truth);
    // Every call is final by now, exactly once, whatever order its result came in.
    expect(Object.values(series).reduce((a, v) => a + v, 0)).toBe(allCalls);
    expect(Object.keys(series).some((k) => k.endsWith("|failure"))).toBe(true);
    expect(Object.keys(series).some((k) => k.endsWith("|unknown"))).toBe(true);
    // Windows of any size partition the queue: their deltas sum to the series.
    const max = outcomes.maxSeq();
    for (const size of [1, 3, 17, 1000]) {
      const sum: Record<string, number> = {};
      let after = 0;
      let windows = 0;
      while (after < max) {
        const upTo = outcomes.windowEnd(after, size);
        expect(upTo).toBeGreaterThan(after);
        const rows = outcomes.delta({ after, upTo });
        expect(rows.reduce((a, r) => a + r.calls, 0)).toBeLessThanOrEqual(size);
        for (const [k, v] of Object.entries(totals(rows))) sum[k] = (sum[k] ?? 0) + v;
        after = upTo;
        windows++;
      }
      expect(sum, `windows of ${size}`).toEqual(series);
      expect(outcomes.pending(after)).toBe(false);
      if (size === 1) expect(windows).toBeGreaterThanOrEqual(allCalls);
    }

    function commit(
      s: string,
      d: { calls: ToolCall[]; results: Map<string, boolean | null> },
      events: ReturnType<typeof event>[],
      at: number,
    ) {
      const results = d.calls
        .filter((c) => d.results.has(c.callKey))
        .map((c) => result(c, d.results.get(c.callKey) ?? null, 500));
      const source = { adapterId: "cline", path: `/s/${s}.json`, origin: "walk" as const, hint: {} };
      l.commit(
        observation(
          events,
          d.calls,
          at,
          source,
          docSignals(results, { sessionId: s, rootSessionId: s, lastTsMs: T + at * 1000 }),
        ),
      );
    }
  });

  it("every statement over the final calls reads a seq range of their index, never every call", () => {
    const db = new Database(join(dir, LEDGER_FILE), { readonly: true });
    try {
      for (const [name, sql] of Object.entries(QUEUE_SQL)) {
        const params = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map((m) => [m[1], 0]));
        const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map(
          (r) => r.detail,
        );
        const calls = plan.filter((p) => /\btool_calls\b|\bc\b/.test(p));
        expect(calls.length, `${name}: ${plan.join(" | ")}`).toBeGreaterThan(0);
        for (const p of calls)
          expect(p, `${name}: ${plan.join(" | ")}`).toMatch(
            /USING (COVERING )?INDEX tool_calls_signal_seq \(signal_seq[<>]/,
          );
      }
    } finally {
      db.close();
    }
  });
});

describe("cline.tool.duration rows", () => {
  // Every bucket edge of TOOL_DURATION_BOUNDARIES in ms, each side of it, 0, and beyond the last.
  const edges = TOOL_DURATION_BOUNDARIES.map((b) => Math.round(b * 1000));
  const durations = [0, 1, ...edges.flatMap((ms) => [ms - 1, ms, ms + 1]), 3_600_000];

  it("equal the JS histograms of the same final calls, bucket for bucket, across commits and a sweep", () => {
    const tools = ["run_commands", "read_files"];
    const calls = durations.map((_, i) =>
      call(`d${i}`, "", 1, {
        callKey: `cline|s1|lead|d${i}`,
        toolName: tools[i % 2] as string,
        timestampMs: T + i * 10_000_000,
      }),
    );
    // Results in three reads (several transactions add to one row); the last call has none.
    const results = calls.slice(0, -1).map((c, i) => result(c, i % 5 === 0, durations[i]));
    for (const upTo of [10, 30, results.length]) {
      const signals = docSignals(results.slice(0, upTo), { lastTsMs: T + calls.length * 10_000_000 });
      l.commit(observation([], calls, 100 + upTo, undefined, signals));
    }
    // The call without a result is final once its document is quiet: unknown, cut off at its last ts.
    l.signals?.finalizeQuiet(T + calls.length * 10_000_000 + QUIET, QUIET);
    const outcomes = l.signals?.toolOutcomes;
    if (outcomes === undefined || l.signals === undefined) throw new Error("a writer has signals");
    const stored = l.signals.genaiSeries().filter((r) => r.metric === "tool_duration");
    // The reference: the same calls' durations through WindowHistograms (the delta export's path).
    const reference = outcomes.durationDelta({ after: 0, upTo: outcomes.maxSeq() });
    const shape = (r: GenaiSeriesRow) => ({
      key: `${r.toolName}/${r.outcome}`,
      count: r.count,
      min: r.min,
      max: r.max,
      counts: r.counts,
      lastEventMs: r.lastEventMs,
    });
    const byKey = (rows: GenaiSeriesRow[]) => rows.map(shape).sort((a, b) => a.key.localeCompare(b.key));
    expect(byKey(stored)).toEqual(byKey(reference));
    for (const r of stored) {
      const ref = reference.find((x) => x.toolName === r.toolName && x.outcome === r.outcome);
      expect(r.sum).toBeCloseTo(ref?.sum ?? Number.NaN, 9);
    }
    expect(stored.map((r) => r.outcome).sort()).toEqual(
      ["failure", "failure", "success", "success", "unknown"].sort(),
    );
    // The edges themselves, independently of WindowHistograms: d <= boundary is in its bucket.
    const all = new Array<number>(TOOL_DURATION_BOUNDARIES.length + 1).fill(0);
    for (const r of stored)
      r.counts.forEach((c, i) => {
        all[i] = (all[i] ?? 0) + c;
      });
    const expected = new Array<number>(TOOL_DURATION_BOUNDARIES.length + 1).fill(0);
    for (const d of durations.slice(0, -1)) {
      const i = TOOL_DURATION_BOUNDARIES.findIndex((b) => d / 1000 <= b);
      const b = i === -1 ? TOOL_DURATION_BOUNDARIES.length : i;
      expected[b] = (expected[b] ?? 0) + 1;
    }
    // The cancelled call: from its ts to its document's last ts (10,000 s: the last bucket).
    expected[TOOL_DURATION_BOUNDARIES.length] = (expected[TOOL_DURATION_BOUNDARIES.length] ?? 0) + 1;
    expect(all).toEqual(expected);
    expect(all[0]).toBe(4); // 0, 1, 9 and 10 ms
  });
});
