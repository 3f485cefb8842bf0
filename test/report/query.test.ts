/**
 * Day/week/month grouping in an IANA zone: SQL groups by UTC bucket, the report labels buckets.
 * Checked against the obvious per-event computation on a real ledger, in zones with DST, 30- and
 * 45-minute offsets, and one whose old offset is not a whole quarter hour (the 1-second fallback).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.ts";
import { labelAt } from "../../src/report/buckets.ts";
import type { TimeDim } from "../../src/report/dims.ts";
import { groupedQuery } from "../../src/report/query.ts";
import { type Zone, zoneNamed } from "../../src/report/time/zone.ts";
import { call, event, observation } from "../helpers/events.ts";

const zone = (name: string): Zone => {
  const z = zoneNamed(name);
  if (z === undefined) throw new Error(name);
  return z;
};
const ZONES = [
  "UTC",
  "Europe/Berlin",
  "America/New_York",
  "Asia/Kolkata",
  "Asia/Kathmandu",
  "Australia/Lord_Howe",
  "America/Santiago",
];

/** Instants on and around the day boundaries (and DST changes) of 2026 in every zone above. */
function edgeTimes(): number[] {
  const out: number[] = [];
  for (const name of ZONES) {
    const z = zone(name);
    for (let t = Date.parse("2026-03-01T00:00:00Z"); t < Date.parse("2026-11-15T00:00:00Z"); t += 3_600_000) {
      if (labelAt(z, "day", t) !== labelAt(z, "day", t - 3_600_000)) {
        for (const d of [-60_001, -1, 0, 1, 59_999]) out.push(t + d);
      }
    }
  }
  return out;
}

let dir: string;
let ledger: Ledger;
let times: number[];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "report-query-"));
  ledger = Ledger.open(dir);
  const edges = edgeTimes();
  // Exact boundary instants are found hourly; add the exact day starts too.
  times = [...new Set(edges)].filter((_, i) => i % 3 === 0).slice(0, 3000);
  const events = times.map((ts, i) =>
    event(`e${i}`, { timestampMs: ts, input: i + 1, toolCallCount: i % 2 }),
  );
  const calls = events
    .filter((_, i) => i % 2 === 1)
    .map((e, i) => call(`c${i}`, e.dedupKey, 1, { timestampMs: e.timestampMs }));
  ledger.commit(observation(events, calls));
});
afterAll(() => {
  ledger.close();
  rmSync(dir, { recursive: true, force: true });
});

function naive(
  z: Zone,
  dim: TimeDim,
  from: number,
  to: number,
): Record<string, { input: number; events: number }> {
  const out: Record<string, { input: number; events: number }> = {};
  times.forEach((ts, i) => {
    if (ts < from || ts >= to) return;
    const l = labelAt(z, dim, ts);
    const cell = out[l] ?? { input: 0, events: 0 };
    cell.input += i + 1;
    cell.events += 1;
    out[l] = cell;
  });
  return out;
}

describe("groupedQuery", () => {
  it("groups by local day, week and month exactly as labelling each event would", () => {
    for (const name of ZONES) {
      const z = zone(name);
      for (const dim of ["day", "week", "month"] as const) {
        const q = groupedQuery(ledger.report, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, z);
        const got = Object.fromEntries(
          q("events", [dim]).map((r) => [r[dim], { input: r.input, events: r.events }]),
        );
        expect(got, `${name} ${dim}`).toEqual(
          naive(z, dim, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
        );
      }
    }
  });

  it("keeps exactly the events of a window, for any window and zone (property)", () => {
    const lo = Math.min(...times);
    const hi = Math.max(...times);
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.integer({ min: lo - 1000, max: hi + 1000 }),
        fc.integer({ min: 1, max: 40 * 86_400_000 }),
        (name, from, len) => {
          const z = zone(name);
          const q = groupedQuery(ledger.report, from, from + len, z);
          const got = Object.fromEntries(
            q("events", ["day"]).map((r) => [r.day, { input: r.input, events: r.events }]),
          );
          expect(got).toEqual(naive(z, "day", from, from + len));
        },
      ),
      { numRuns: 40 },
    );
  });

  it("sorts periods chronologically and groups tool calls the same way", () => {
    const q = groupedQuery(
      ledger.report,
      Number.MIN_SAFE_INTEGER,
      Number.MAX_SAFE_INTEGER,
      zone("Asia/Kathmandu"),
    );
    const days = q("calls", ["day", "model"]).map((r) => String(r.day));
    expect(days).toEqual([...days].sort());
    const calls = q("calls", ["day"]).reduce((a, r) => a + Number(r.toolCalls), 0);
    expect(calls).toBe(times.filter((_, i) => i % 2 === 1).length);
  });

  it("falls back to one-second buckets where an old offset is not a whole quarter hour", () => {
    // Liberia kept -00:44:30 until 1972: its midnight falls inside a 15-minute UTC bucket.
    const monrovia = zone("Africa/Monrovia");
    const d = mkdtempSync(join(tmpdir(), "report-query-old-"));
    const l = Ledger.open(d);
    try {
      const midnight = Date.parse("1971-06-01T00:44:30Z");
      l.commit(
        observation([
          event("before", { timestampMs: midnight - 1000, input: 1 }),
          event("after", { timestampMs: midnight, input: 2 }),
        ]),
      );
      const q = groupedQuery(l.report, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, monrovia);
      expect(q("events", ["day"]).map((r) => [r.day, r.input])).toEqual([
        ["1971-05-31", 1],
        ["1971-06-01", 2],
      ]);
    } finally {
      l.close();
      rmSync(d, { recursive: true, force: true });
    }
  });
});
