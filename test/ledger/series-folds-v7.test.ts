/**
 * Schema v7 (src/ledger/tables/series-folds-v7.ts): the edit and activity series are folded from their
 * records when read. A v6 ledger (whose build upserted its series at every commit) upgrades with its
 * fold points at its tables' highest ids, so nothing is summed twice; what a later commit adds is folded
 * once; the series after commits and folds in any interleaving equal one fold of the whole history.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EditRecord, Source } from "../../src/adapter/types.ts";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import { call, edit, event, finalObservation, withEdits } from "../helpers/events.ts";
import { ledgerAtVersion } from "../helpers/v1-ledger.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "folds-v7-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const T0 = 1_796_000_000_000;
const src = (path: string): Source => ({ adapterId: "cline", path, origin: "walk", hint: {} });

/** Document d: one paid request, one call, three edits (two decisions, two languages). */
function doc(d: number) {
  const paid = event(`m${d}`, { toolCallCount: 1, timestampMs: T0 + d * 1000, client: "cli" });
  const a = call(`c${d}`, paid.dedupKey, 1, { timestampMs: T0 + d * 1000, toolUseId: `toolu_${d}` });
  const edits: EditRecord[] = [
    edit(a, { linesAdded: 5 + d, linesRemoved: 1 }, 0),
    edit(a, { linesAdded: 2, linesRemoved: 9, decision: "rejected", source: "user" }, 1),
    edit(a, { linesAdded: 1, linesRemoved: 0, exact: false, language: "python" }, 2),
  ];
  return withEdits(finalObservation([paid], [a], 100 + d, src(`/s/d${d}.messages.json`)), edits);
}

const throughOf = (path: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare("SELECT name, through_id AS throughId FROM series_folds ORDER BY name").all();
  } finally {
    db.close();
  }
};

describe("schema v7: the delivered series folded at read", () => {
  it("a v6 ledger upgrades with its fold points at its highest ids: its series are kept, not summed again", () => {
    const v6 = ledgerAtVersion(
      dir,
      (s) => {
        const w = Ledger.open(s);
        for (let d = 0; d < 3; d++) w.commit(doc(d));
        w.close();
      },
      6,
    );
    const old = new Database(join(v6, LEDGER_FILE), { readonly: true });
    const series = old.prepare("SELECT * FROM edit_series ORDER BY id").all();
    old.close();
    expect(series.length).toBeGreaterThan(0);
    const l = Ledger.open(v6);
    try {
      expect(throughOf(join(v6, LEDGER_FILE))).toEqual([
        { name: "activity", throughId: 0 },
        { name: "edit", throughId: 3 },
      ]);
      expect(l.foldSeries()).toBe(0);
      const raw = new Database(join(v6, LEDGER_FILE), { readonly: true });
      expect(raw.prepare("SELECT * FROM edit_series ORDER BY id").all()).toEqual(series);
      raw.close();
      // A document after the upgrade: its pack is folded once, at the next read.
      l.commit(doc(3));
      expect(l.edits.series().reduce((n, s) => n + s.edits, 0)).toBe(12);
      expect(l.foldSeries()).toBe(0);
      expect(l.edits.series().reduce((n, s) => n + s.edits, 0)).toBe(12);
    } finally {
      l.close();
    }
  });

  it("series folded between any commits equal one fold of the whole history", () => {
    const folds = [[], [0], [1, 3], [0, 1, 2, 3, 4]];
    const results = folds.map((after, k) => {
      const l = Ledger.open(join(dir, `l${k}`), { now: () => T0 + 60_000 });
      try {
        for (let d = 0; d < 5; d++) {
          l.commit(doc(d));
          if (after.includes(d)) l.foldSeries();
        }
        // A document read again adds no edit, so the fold finds nothing new in it.
        l.commit(doc(2));
        return { series: l.edits.series(), activity: l.activity.series() };
      } finally {
        l.close();
      }
    });
    for (const r of results.slice(1)) expect(r).toEqual(results[0]);
    expect(results[0]?.series.reduce((n, s) => n + s.edits, 0)).toBe(15);
    expect(results[0]?.series.reduce((n, s) => n + s.linesAdded, 0)).toBe(5 + 6 + 7 + 8 + 9 + 2 * 5 + 1 * 5);
  });
});
