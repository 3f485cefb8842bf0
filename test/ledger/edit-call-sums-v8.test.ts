/**
 * Schema v8 (src/ledger/tables/edit-call-sums-v8.ts): an edit is kept once by its call's row
 * (`tool_calls.edit_sums`: its edits' sums and places), not by an `edit_keys` row. A v7 ledger holding
 * rows of every kind upgrades in place: each call's sums are its v7 edit_keys rows', the signal batch
 * reads what it read, and a re-read stores nothing again; an edit decided after its call was stored
 * is added to that call's row once; an edit whose call has no row is refused, not stored.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import { MIGRATIONS } from "../../src/ledger/schema.ts";
import { EDIT_CALL_SUMS_VERSION } from "../../src/ledger/tables/edit-call-sums-v8.ts";
import { editDoc } from "../helpers/edit-docs.ts";
import { call, edit, event, finalObservation, withEdits } from "../helpers/events.ts";
import { readLedger } from "../helpers/read-ledger.ts";
import { wholeBatch } from "../helpers/signal-batch.ts";
import { ledgerAtVersion, tablesOf } from "../helpers/v1-ledger.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "edits-v8-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const doc = editDoc;

function write(stateDir: string): void {
  const w = Ledger.open(stateDir);
  for (let d = 0; d < 3; d++) w.commit(doc(d, d));
  w.close();
}

/** Each call's stored edit sums, places sorted (their order is the upgrade's GROUP BY's). */
function callSums(db: Database.Database): Record<string, unknown[]> {
  const rows = db
    .prepare("SELECT call_key AS k, edit_sums AS s FROM tool_calls WHERE edit_sums IS NOT NULL")
    .all() as { k: string; s: string }[];
  return Object.fromEntries(
    rows.map((r) => {
      const a = JSON.parse(r.s) as unknown[];
      return [r.k, [...a.slice(0, 6), [...(a[6] as string[])].sort()]];
    }),
  );
}

/** A table's rows in one order whatever its key (some are WITHOUT ROWID). */
const allRows = (db: Database.Database, t: string): Record<string, unknown>[] =>
  (db.prepare(`SELECT * FROM ${t}`).all() as Record<string, unknown>[]).sort((x, y) =>
    JSON.stringify(x) < JSON.stringify(y) ? -1 : 1,
  );

describe("schema v8: an edit kept once by its call's row", () => {
  it("is the step after v7", () => {
    expect(EDIT_CALL_SUMS_VERSION).toBe(8);
    expect(MIGRATIONS.length).toBeGreaterThanOrEqual(EDIT_CALL_SUMS_VERSION);
  });

  it("a v7 ledger holding rows of every kind upgrades in place: each call's sums its edit_keys rows'", () => {
    const v7 = ledgerAtVersion(dir, write, 7);
    const path = join(v7, LEDGER_FILE);
    const old = new Database(path);
    expect(old.pragma("user_version", { simple: true })).toBe(7);
    // What v7's signal batch summed per call: its edit_keys rows, by the key's prefix.
    const want = Object.fromEntries(
      (
        old
          .prepare(
            `SELECT substr(edit_key, 1, length(rtrim(edit_key, '0123456789')) - 1) AS k,
               SUM(lines_added) AS a, SUM(lines_removed) AS r, MIN(exact) AS x, SUM(decision = 'accepted') AS ac,
               SUM(decision = 'rejected') AS rj, SUM(decision = 'failed') AS f,
               json_group_array(substr(edit_key, length(rtrim(edit_key, '0123456789')) + 1)) AS p
             FROM edit_keys GROUP BY 1`,
          )
          .all() as {
          k: string;
          a: number;
          r: number;
          x: number;
          ac: number;
          rj: number;
          f: number;
          p: string;
        }[]
      ).map((r) => [r.k, [r.a, r.r, r.x, r.ac, r.rj, r.f, (JSON.parse(r.p) as string[]).sort()]]),
    );
    expect(Object.keys(want)).toHaveLength(6);
    const others = tablesOf(old).filter((t) => t !== "edit_keys");
    const rows = new Map(others.map((t) => [t, allRows(old, t)]));
    old.close();

    const l = Ledger.open(v7);
    try {
      const db = new Database(path, { readonly: true });
      try {
        expect(db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
        expect(tablesOf(db)).not.toContain("edit_keys");
        expect(callSums(db)).toEqual(want);
        // Every other row as it was; the calls with their sums beside.
        for (const [t, before] of rows) {
          const after = allRows(db, t);
          if (t !== "tool_calls") expect(after, t).toEqual(before);
          else expect(after.map(({ edit_sums: _, ...r }) => r)).toEqual(before);
        }
        // The signal batch reads what this build reads from the ledger the v7 copy was made of.
        const before = readLedger(join(dir, "source", LEDGER_FILE), wholeBatch);
        const after = wholeBatch(db);
        expect(after).toEqual(before);
        expect(after.find((r) => r.kind === "tool" && r.refKey === "cline|s1|lead|c2|7")).toMatchObject({
          linesAdded: 42 + 100 + 101,
          linesRemoved: 3,
          editsAccepted: 3,
        });
      } finally {
        db.close();
      }
      // Every document read again: nothing new; one grown by an edit: that one, once.
      for (let d = 0; d < 3; d++) expect(l.commit(doc(d, d)).editsAdded).toBe(0);
      expect(l.commit(doc(2, 3)).editsAdded).toBe(1);
      expect(l.commit(doc(2, 3)).editsAdded).toBe(0);
      expect(l.signals?.queued().edit).toBe(4 * 3 + 0 + 1 + 2 + 1);
    } finally {
      l.close();
    }
  });

  it("an edit decided after its call was stored: added to that call's row once", () => {
    const l = Ledger.open(join(dir, "l"));
    try {
      const paid = event("m0", { toolCallCount: 1 });
      const c = call("c0", paid.dedupKey, 1);
      const first = finalObservation([paid], [c]);
      expect(l.commit(withEdits(first, [])).editsAdded).toBe(0);
      const answered = withEdits(first, [
        edit(c, { linesAdded: 4, linesRemoved: 2, decision: "rejected" }, 0),
      ]);
      expect(l.commit(answered).editsAdded).toBe(1);
      expect(l.commit(answered).editsAdded).toBe(0);
      // Its edit alone, its call not in the observation (an adapter that reads the answer apart).
      const alone = withEdits(finalObservation([], []), [edit(c, { linesAdded: 9 }, 1)]);
      expect(l.commit(alone).editsAdded).toBe(1);
      expect(l.commit(alone).editsAdded).toBe(0);
      readLedger(join(dir, "l", LEDGER_FILE), (db) => {
        expect(callSums(db)).toEqual({ [c.callKey]: [13, 5, 1, 1, 1, 0, ["0", "1"]] });
        expect(db.prepare("SELECT COUNT(*) FROM edits").pluck().get()).toBe(2);
        expect(wholeBatch(db).find((r) => r.kind === "tool")).toMatchObject({
          linesAdded: 13,
          editsAccepted: 1,
          editsRejected: 1,
        });
      });
    } finally {
      l.close();
    }
  });

  it("an edit whose call has no row is refused, named with its call, and nothing else of the commit", () => {
    const l = Ledger.open(join(dir, "l"));
    try {
      const paid = event("m0", { toolCallCount: 1 });
      const c = call("c0", paid.dedupKey, 1);
      const stray = call("nowhere", paid.dedupKey, 1);
      const o = withEdits(finalObservation([paid], [c]), [edit(c, {}, 0), edit(stray, {}, 0)]);
      const r = l.commit(o);
      expect(r.editsAdded).toBe(1);
      expect(r.eventsAdded).toBe(1);
      expect(r.editsInvalid).toEqual([
        { editKey: `${stray.callKey}|0`, reason: `its call ${stray.callKey} is not stored` },
      ]);
      readLedger(join(dir, "l", LEDGER_FILE), (db) => {
        expect(db.prepare("SELECT edit_key FROM edits").pluck().all()).toEqual([`${c.callKey}|0`]);
      });
    } finally {
      l.close();
    }
  });
});
