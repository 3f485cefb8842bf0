/**
 * The signal queue has no UNIQUE index: each record is queued by the statement that makes it
 * new (an event or call INSERT that inserted, a `final` flag flipped, a compaction inserted).
 * These tests fail if any path queued a record twice or lost one: re-reads in one transaction and
 * across restarts, a result written in a later rewrite, a rewrite that lost a result, a failed
 * batch, an upgrade from rows stored before the guards, and random sequences of all of those.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.ts";
import type { SignalKind, SignalRow, Signals } from "../../src/ledger/signals.ts";
import { LEAD_PATH, leadDoc, messagesDoc, observe } from "../helpers/signal-docs.ts";

let dir: string;
let l: Ledger;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "signals-guards-"));
  l = Ledger.open(dir);
});
afterEach(() => {
  l.close();
  rmSync(dir, { recursive: true, force: true });
});

const ALL: ReadonlySet<SignalKind> = new Set(["chat", "tool", "turn", "compaction"]);
const QUIET = 900_000;
const signals = (): Signals => l.signals as Signals;
const restart = (): void => {
  l.close();
  l = Ledger.open(dir);
};

/** Every queued record, asserting that none is queued twice. */
function queue(): readonly SignalRow[] {
  const rows = signals().batch(signals().cursor("audit", 0), ALL, 100_000).rows;
  const keys = rows.map((r) => `${r.kind}|${r.refKey}`);
  expect(keys.length - new Set(keys).size).toBe(0);
  return rows;
}
const tool = (id: string) => queue().filter((r) => r.kind === "tool" && r.toolUseId === id);

describe("queued once, by the statement that makes a record new", () => {
  it("a document read twice in one commit transaction", () => {
    const { doc } = leadDoc();
    l.commitAll([observe(doc, LEAD_PATH, 100), observe(doc, LEAD_PATH, 101)]);
    expect(signals().queued()).toEqual({ chat: 4, tool: 3, turn: 1, compaction: 0, edit: 0 });
    queue();
  });

  it("a result written by a later rewrite finalizes its call once, whatever reads and restarts follow", () => {
    const { t0, doc: open } = leadDoc({ cancelled: true });
    const { doc: full } = leadDoc();
    l.commit(observe(open, LEAD_PATH, 100));
    expect(tool("toolu_3")).toEqual([]);
    l.commit(observe(full, LEAD_PATH, 200));
    l.commit(observe(full, LEAD_PATH, 201));
    restart();
    l.commit(observe(full, LEAD_PATH, 202));
    signals().finalizeQuiet(t0 + 100 * QUIET, QUIET);
    expect(tool("toolu_3")).toEqual([
      expect.objectContaining({ endMs: t0 + 12_500, outcome: "success", cancelled: false }),
    ]);
    expect(signals().queued()).toEqual({ chat: 4, tool: 3, turn: 2, compaction: 0, edit: 0 });
  });

  it("a rewrite that lost a call's result does not reopen it (no second, cancelled record)", () => {
    const { t0, doc: full } = leadDoc();
    const { doc: open } = leadDoc({ cancelled: true });
    l.commit(observe(full, LEAD_PATH, 200));
    l.commit(observe(open, LEAD_PATH, 100));
    expect(signals().finalizeQuiet(t0 + 100 * QUIET, QUIET)).toBe(1); // the open turn only
    expect(tool("toolu_3")).toEqual([expect.objectContaining({ outcome: "success", cancelled: false })]);
    expect(signals().queued()).toEqual({ chat: 4, tool: 3, turn: 2, compaction: 0, edit: 0 });
  });

  it("a restart between reads queues nothing twice; the sweep after it finalizes each open record once", () => {
    const { t0, doc: open } = leadDoc({ cancelled: true });
    l.commit(observe(open, LEAD_PATH, 100));
    restart();
    l.commit(observe(open, LEAD_PATH, 100));
    expect(signals().queued()).toEqual({ chat: 3, tool: 2, turn: 1, compaction: 0, edit: 0 });
    const last = t0 + 11_000;
    restart();
    expect(signals().finalizeQuiet(last + QUIET, QUIET)).toBe(2);
    restart();
    expect(signals().finalizeQuiet(last + 2 * QUIET, QUIET)).toBe(0);
    l.commit(observe(leadDoc().doc, LEAD_PATH, 200)); // its result, after it was cut off
    expect(tool("toolu_3")).toEqual([expect.objectContaining({ outcome: "unknown", cancelled: true })]);
    expect(signals().queued()).toEqual({ chat: 4, tool: 3, turn: 2, compaction: 0, edit: 0 });
  });

  it("a failed batch rolls its flips back with its rows: retried, the late call is queued once", () => {
    const { doc: open } = leadDoc({ cancelled: true });
    l.commit(observe(open, LEAD_PATH, 100));
    const full = observe(leadDoc().doc, LEAD_PATH, 200);
    const bad = observe(messagesDoc([]), "/s/other/other.messages.json");
    const broken = {
      ...bad,
      events: full.events.map((e) => ({ ...e, dedupKey: `${e.dedupKey}-x`, total: -1 })),
    };
    expect(() => l.commitAll([full, broken])).toThrow();
    expect(signals().queued()).toEqual({ chat: 3, tool: 2, turn: 1, compaction: 0, edit: 0 });
    expect(tool("toolu_3")).toEqual([]);
    l.commitAll([full]);
    expect(tool("toolu_3")).toEqual([expect.objectContaining({ outcome: "success" })]);
    expect(signals().queued()).toEqual({ chat: 4, tool: 3, turn: 1, compaction: 0, edit: 0 });
  });
});

describe("random reads, rewrites, restarts and sweeps", () => {
  // Prefixes of the full document: the states a rewrite can leave on disk, in any order.
  const { t0, doc } = leadDoc();
  const messages = (doc as { messages: unknown[] }).messages;
  const version = (n: number) => ({ ...doc, messages: messages.slice(0, n) });
  const step = fc.oneof(
    fc.record({ read: fc.integer({ min: 1, max: messages.length }) }),
    fc.record({
      batch: fc.array(fc.integer({ min: 1, max: messages.length }), { minLength: 2, maxLength: 3 }),
    }),
    fc.constant({ restart: true }),
    fc.record({ sweep: fc.integer({ min: 0, max: 3 }) }),
  );

  it("end with every record queued exactly once, the same records as one read and one sweep", () => {
    const reference = (() => {
      l.commit(observe(doc, LEAD_PATH, 1));
      signals().finalizeQuiet(t0 + 100 * QUIET, QUIET);
      return queue()
        .map((r) => `${r.kind}|${r.refKey}`)
        .sort();
    })();
    expect(reference).toHaveLength(4 + 3 + 2);
    fc.assert(
      fc.property(fc.array(step, { maxLength: 8 }), (steps) => {
        l.close();
        rmSync(dir, { recursive: true, force: true });
        l = Ledger.open(dir);
        let size = 10;
        for (const s of steps) {
          if ("read" in s) l.commit(observe(version(s.read), LEAD_PATH, size++));
          else if ("batch" in s) l.commitAll(s.batch.map((n) => observe(version(n), LEAD_PATH, size++)));
          else if ("restart" in s) restart();
          else signals().finalizeQuiet(t0 + 13_000 + s.sweep * QUIET, QUIET);
          queue();
        }
        l.commit(observe(doc, LEAD_PATH, size++));
        signals().finalizeQuiet(t0 + 100 * QUIET, QUIET);
        expect(
          queue()
            .map((r) => `${r.kind}|${r.refKey}`)
            .sort(),
        ).toEqual(reference);
      }),
      { numRuns: 40 },
    );
  });
});
