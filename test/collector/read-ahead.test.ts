import { describe, expect, it } from "vitest";
import type { Adapter, Observation, Source, UsageEvent } from "../../src/adapter/types.ts";
import {
  BACKFILL_BATCH_SOURCES,
  BACKFILL_MIN_SOURCES,
  BACKFILL_READ_AHEAD,
  batchSourcesFor,
  COMMIT_BATCH_ROWS,
  COMMIT_BATCH_SOURCES,
  READ_AHEAD,
  readAheadFor,
  readAheadLimit,
  runPass,
} from "../../src/collector/pass.ts";
import type { Ledger } from "../../src/ledger/ledger.ts";

describe("readAheadFor", () => {
  it("reads far ahead only in a backfill, and never less than one source", () => {
    expect(readAheadFor(0)).toBe(READ_AHEAD);
    expect(readAheadFor(BACKFILL_MIN_SOURCES - 1)).toBe(READ_AHEAD);
    expect(readAheadFor(BACKFILL_MIN_SOURCES)).toBe(BACKFILL_READ_AHEAD);
    expect(readAheadFor(BACKFILL_MIN_SOURCES, 1)).toBe(1);
    expect(readAheadFor(0, 0)).toBe(1);
    // A batch commits while the next one is read: the window covers a batch and more.
    expect(BACKFILL_READ_AHEAD).toBeGreaterThan(COMMIT_BATCH_SOURCES);
  });

  it("batches more sources per commit only in a backfill", () => {
    expect(batchSourcesFor(BACKFILL_MIN_SOURCES - 1)).toBe(COMMIT_BATCH_SOURCES);
    expect(batchSourcesFor(BACKFILL_MIN_SOURCES)).toBe(BACKFILL_BATCH_SOURCES);
  });

  it("readAheadLimit holds a batch's worth of rows at the largest source, within [READ_AHEAD, window]", () => {
    expect(readAheadLimit(BACKFILL_READ_AHEAD, undefined)).toBe(READ_AHEAD);
    expect(readAheadLimit(BACKFILL_READ_AHEAD, 8)).toBe(BACKFILL_READ_AHEAD);
    expect(readAheadLimit(BACKFILL_READ_AHEAD, 700)).toBe(Math.floor(COMMIT_BATCH_ROWS / 700));
    expect(readAheadLimit(BACKFILL_READ_AHEAD, 100_000)).toBe(READ_AHEAD);
    expect(readAheadLimit(1, 0)).toBe(1);
  });
});

const ev = (path: string, k: number): UsageEvent => ({
  dedupKey: `${path}|${k}`,
  sessionId: path,
  agent: "lead",
  messageId: `m${k}`,
  timestampMs: 1,
  model: "m",
  provider: "p",
  project: "/p",
  input: 1,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  total: 1,
  cacheBranch: "subset",
  recordedCost: null,
  toolCallCount: 0,
  sourcePath: path,
});

/**
 * A fake adapter whose reads finish out of order (a later source may be read first), and a fake
 * ledger that records every batch: what the pass holds at each moment is then observable.
 */
function harness(n: number, rowsPerSource: number, withCheckpoints = 0) {
  const sources: Source[] = Array.from({ length: n }, (_, i) => ({
    adapterId: "fake",
    path: `/s/${String(i).padStart(5, "0")}`,
    origin: "walk",
    hint: {},
  }));
  let inFlight = 0;
  let maxInFlight = 0;
  let readNotCommitted = 0;
  let maxHeldRows = 0;
  const committed: string[] = [];
  const batches: { sources: number; rows: number }[] = [];
  const adapter: Adapter = {
    id: "fake",
    discover: async () => ({ sources, problems: [] }),
    collectIncremental: async (source) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      // Out of order: odd sources take a few more turns of the event loop.
      const turns = Number(source.path.slice(3)) % 2 === 1 ? 4 : 1;
      for (let t = 0; t < turns; t++) await new Promise((r) => setImmediate(r));
      inFlight--;
      readNotCommitted += rowsPerSource + 1;
      maxHeldRows = Math.max(maxHeldRows, readNotCommitted);
      const events = Array.from({ length: rowsPerSource }, (_, k) => ev(source.path, k));
      const obs: Observation = {
        status: "read",
        source,
        checkpoint: { path: source.path, size: 1, mtimeNs: "1", ino: 1, dev: 1 },
        events,
        toolCalls: [],
        problems: [],
      };
      return obs;
    },
  };
  const known = new Map(
    sources
      .slice(0, withCheckpoints)
      .map((s) => [s.path, { path: s.path, size: 0, mtimeNs: "0", ino: 0, dev: 0 }]),
  );
  const ledger = {
    knownCheckpoints: () => ({ all: () => known, token: () => "" }),
    pruneCheckpoints: () => 0,
    commitAll: (obs: readonly Extract<Observation, { status: "read" }>[]) => {
      batches.push({ sources: obs.length, rows: obs.reduce((n, o) => n + o.events.length + 1, 0) });
      for (const o of obs) {
        committed.push(o.source.path);
        readNotCommitted -= o.events.length + 1;
      }
      return obs.map((o) => ({ eventsAdded: o.events.length, callsAdded: 0 }));
    },
  } as unknown as Ledger;
  return {
    adapter,
    ledger,
    sources,
    committed,
    batches,
    stats: () => ({ maxInFlight, maxHeldRows }),
  };
}

describe("runPass read-ahead", () => {
  it("an ordinary pass keeps READ_AHEAD sources in flight, and commits each source once, in order", async () => {
    const h = harness(BACKFILL_MIN_SOURCES + 20, 2, 21);
    const r = await runPass(h.adapter, h.ledger);
    expect(r.read).toBe(h.sources.length);
    expect(h.committed).toEqual(h.sources.map((s) => s.path));
    expect(h.stats().maxInFlight).toBeLessThanOrEqual(READ_AHEAD);
    expect(Math.max(...h.batches.map((b) => b.sources))).toBe(COMMIT_BATCH_SOURCES);
  });

  it("a backfill reads up to BACKFILL_READ_AHEAD ahead, each source committed once, in order", async () => {
    const h = harness(3 * BACKFILL_MIN_SOURCES, 2);
    const r = await runPass(h.adapter, h.ledger);
    expect(r.read).toBe(h.sources.length);
    expect(h.committed).toEqual(h.sources.map((s) => s.path));
    // It does read far ahead (what lets a worker thread scan while a batch commits) ...
    expect(h.stats().maxInFlight).toBeGreaterThan(COMMIT_BATCH_SOURCES);
    expect(h.stats().maxInFlight).toBeLessThanOrEqual(BACKFILL_READ_AHEAD);
    // ... and commits bigger batches.
    expect(Math.max(...h.batches.map((b) => b.sources))).toBe(BACKFILL_BATCH_SOURCES);
  });

  it("a backfill of large sources holds a bounded number of rows however far it may read", async () => {
    const rows = 700;
    const h = harness(BACKFILL_MIN_SOURCES, rows);
    const r = await runPass(h.adapter, h.ledger);
    expect(r.read).toBe(h.sources.length);
    expect(h.committed).toEqual(h.sources.map((s) => s.path));
    // A batch (COMMIT_BATCH_ROWS and its last source) and a batch's worth read ahead, plus the
    // first READ_AHEAD read before the size was known: far below 128 sources' rows.
    const bound = 2 * (COMMIT_BATCH_ROWS + rows + 1) + READ_AHEAD * (rows + 1);
    expect(h.stats().maxHeldRows).toBeLessThanOrEqual(bound);
    // A batch stops at COMMIT_BATCH_ROWS (plus the source that crossed it), whatever its sources.
    for (const b of h.batches) expect(b.rows).toBeLessThan(COMMIT_BATCH_ROWS + rows + 1);
    expect(bound).toBeLessThan(BACKFILL_READ_AHEAD * (rows + 1));
  });
});
