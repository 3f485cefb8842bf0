import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createClineAdapter } from "../../src/adapter/cline/adapter.ts";
import { BackgroundReader } from "../../src/adapter/cline/background-reader.ts";
import { resolveClinePaths } from "../../src/adapter/cline/paths.ts";
import { BACKFILL_BATCH_SOURCES, BACKFILL_MIN_SOURCES, runPass } from "../../src/collector/pass.ts";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import { makeTree, type Tree } from "../helpers/cline-tree.ts";

// A backfill (>= BACKFILL_MIN_SOURCES new documents) reads far ahead, its documents scanned in
// the background reader's worker thread: the ledger must end up exactly as a pass that reads one
// source at a time on the main thread, and a second pass must add nothing.
let dir: string;
let tree: Tree;
// More than a backfill's batch, so a backfill commits at least twice.
const N = BACKFILL_BATCH_SOURCES + 44;
const M = (i: number, o: number) => ({
  inputTokens: i,
  outputTokens: o,
  cacheReadTokens: 5,
  cacheWriteTokens: 3,
});

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "backfill-worker-"));
  tree = makeTree(
    join(dir, "home"),
    Array.from({ length: N }, (_, i) => ({
      id: `17960${String(i).padStart(8, "0")}_b${i}`,
      cwd: `/p${i % 7}`,
      messages: [
        { id: "m1", metrics: M(100 + i, 7), tools: ["read_file", "write_to_file"], model: `model-${i % 3}` },
        { id: "m2", metrics: M(i, 1 + (i % 5)) },
        { id: "m3", tools: ["execute_command"] },
      ],
    })),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function snapshot(ledger: Ledger) {
  const strip = <T extends object>(rows: T[]) =>
    rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !/(^id$|_ms$|Ms$)/.test(k))));
  return { counts: ledger.counts(), usage: strip(ledger.usageSeries()), tools: strip(ledger.toolSeries()) };
}

describe("a backfill through the worker thread", () => {
  it("stores exactly what a one-at-a-time pass stores, once", async () => {
    const paths = resolveClinePaths({}, {}, tree.home);
    const a = Ledger.open(join(dir, "a"));
    const b = Ledger.open(join(dir, "b"));
    // Which readers did the reading (the adapter keeps its own).
    const readers = new Set<BackgroundReader>();
    const collect = BackgroundReader.prototype.collect;
    const spy = vi.spyOn(BackgroundReader.prototype, "collect").mockImplementation(function (
      this: BackgroundReader,
      s,
      c,
    ) {
      readers.add(this);
      return collect.call(this, s, c);
    });
    // Whatever the machine's load (the worker waits for a core to spare): this test is about it.
    const gate = vi.spyOn(BackgroundReader.prototype, "spareCore").mockReturnValue(true);
    try {
      const fast = await runPass(createClineAdapter(paths), a);
      const [worked] = [...readers];
      readers.clear();
      const slow = await runPass(createClineAdapter(paths), b, { readAhead: 1 });
      const [alone] = [...readers];
      // The backfill did read in the worker; the one-at-a-time pass never started one.
      expect(worked?.stats.inWorker).toBeGreaterThan(BACKFILL_MIN_SOURCES);
      expect(alone?.stats).toMatchObject({ inWorker: 0, started: 0 });
      expect(N).toBeGreaterThanOrEqual(BACKFILL_MIN_SOURCES);
      expect(fast.read).toBe(N);
      expect({ ...fast, durationMs: 0 }).toEqual({ ...slow, durationMs: 0 });
      expect(snapshot(a)).toEqual(snapshot(b));
      expect(snapshot(a).counts.events).toBe(2 * N);
      const again = await runPass(createClineAdapter(paths), a);
      expect(again).toMatchObject({
        read: 0,
        unchanged: N,
        eventsAdded: 0,
        callsAdded: 0,
      });
    } finally {
      spy.mockRestore();
      gate.mockRestore();
      a.close();
      b.close();
    }
  });

  it("a commit that fails mid-backfill (disk full) loses whole batches only; the next pass completes it exactly", async () => {
    const paths = resolveClinePaths({}, {}, tree.home);
    const pagesOf = (d: string) => {
      const db = new Database(join(dir, d, LEDGER_FILE), { readonly: true });
      try {
        return db.pragma("page_count", { simple: true }) as number;
      } finally {
        db.close();
      }
    };
    Ledger.open(join(dir, "empty")).close();
    const empty = pagesOf("empty");
    const full = pagesOf("a");
    // Room for the first batch (256 of the 300 sources), not for all of them.
    const small = Ledger.open(join(dir, "c"), { maxPageCount: Math.floor(empty + (full - empty) * 0.93) });
    await expect(runPass(createClineAdapter(paths), small)).rejects.toMatchObject({ code: "SQLITE_FULL" });
    const partial = small.counts();
    small.close();
    // All or nothing per batch, checkpoints included: whole batches of whole sources, no more.
    expect(partial.sources).toBeGreaterThan(0);
    expect(partial.sources % BACKFILL_BATCH_SOURCES).toBe(0);
    expect(partial.sources).toBeLessThan(N);
    expect(partial.events).toBe(2 * partial.sources);
    const again = Ledger.open(join(dir, "c"));
    const ref = Ledger.open(join(dir, "a"), { readOnly: true });
    try {
      const r = await runPass(createClineAdapter(paths), again);
      expect(r.read).toBe(N - partial.sources);
      expect(snapshot(again)).toEqual(snapshot(ref));
    } finally {
      again.close();
      ref.close();
    }
  });
});
