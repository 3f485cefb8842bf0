/** What the edits and activity tables share (src/ledger/delivered/series-store.ts). */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import {
  clampMs,
  foldSql,
  idReads,
  lazyStatements,
  SeriesStore,
} from "../../src/ledger/delivered/series-store.ts";
import { SERIES_FOLDS_V7 } from "../../src/ledger/tables/series-folds-v7.ts";

/** Records `edits` (the name idReads takes) and their series `s`, with the fold point of schema v7. */
function table(): Database.Database {
  const db = new Database(":memory:");
  db.exec(`CREATE TABLE edits (id INTEGER PRIMARY KEY, a TEXT, b TEXT, v INTEGER, at INTEGER);
    CREATE TABLE s (id INTEGER PRIMARY KEY, a TEXT, b TEXT, n INTEGER, total INTEGER, first_ms INTEGER,
      updated_ms INTEGER, last_event_ms INTEGER, UNIQUE (a, b));
    CREATE TABLE edit_packs (id INTEGER PRIMARY KEY); CREATE TABLE activity (id INTEGER PRIMARY KEY);
    ${SERIES_FOLDS_V7}`);
  return db;
}

const DELTA =
  "SELECT a, b, COUNT(*) AS n, SUM(v) AS total, MIN(at) AS firstMs, MAX(at) AS updatedMs, MAX(at) AS lastEventMs " +
  "FROM edits WHERE id > @after AND id <= @upTo GROUP BY a, b ORDER BY MIN(id)";
const writes = (db: Database.Database) => ({
  fold: db.prepare(foldSql("s", ["a", "b"], ["n", "total"], DELTA)),
});
const reads = (db: Database.Database) => ({
  all: db.prepare("SELECT a, b, n, total, first_ms AS f, updated_ms AS u FROM s ORDER BY id"),
  live: db.prepare(
    "SELECT a, b FROM s WHERE last_event_ms >= @eventSince OR updated_ms >= @updatedSince ORDER BY id",
  ),
  page: db.prepare(
    `SELECT id, a, b FROM s WHERE id > @afterId AND (last_event_ms >= @eventSince OR updated_ms >= @updatedSince)
     ORDER BY id LIMIT @limit`,
  ),
  delta: db.prepare(DELTA),
  ...idReads(db, "edits"),
});
const store = (db: Database.Database, folded = true) =>
  new SeriesStore<Record<string, unknown>, ReturnType<typeof writes>, ReturnType<typeof reads>>(
    db,
    true,
    folded,
    "edit",
    writes,
    reads,
  );
const add = (db: Database.Database, rows: readonly [string, string, number, number][]) => {
  const ins = db.prepare("INSERT INTO edits (a, b, v, at) VALUES (?, ?, ?, ?)");
  for (const r of rows) ins.run(...r);
};
const through = (db: Database.Database) =>
  (db.prepare("SELECT through_id AS t FROM series_folds WHERE name = 'edit'").get() as { t: number }).t;

describe("series store", () => {
  it("folds the records after its point into their series at read, each record once", () => {
    const db = table();
    const st = store(db);
    add(db, [
      ["x", "y", 2, 100],
      ["x", "z", 4, 100],
    ]);
    // Nothing is summed by the INSERTs: the series table is empty until a read folds.
    expect(db.prepare("SELECT COUNT(*) AS n FROM s").get()).toEqual({ n: 0 });
    expect(st.series()).toEqual([
      { a: "x", b: "y", n: 1, total: 2, f: 100, u: 100 },
      { a: "x", b: "z", n: 1, total: 4, f: 100, u: 100 },
    ]);
    expect(through(db)).toBe(2);
    // A second read folds nothing; new records are added once, a new series appended.
    expect(st.fold()).toBe(0);
    add(db, [
      ["x", "y", 3, 200],
      ["q", "r", 4, 150],
    ]);
    expect([...st.live({ eventSinceMs: 150, updatedSinceMs: Number.POSITIVE_INFINITY })]).toEqual([
      { a: "x", b: "y" },
      { a: "q", b: "r" },
    ]);
    expect(st.series()).toEqual([
      { a: "x", b: "y", n: 2, total: 5, f: 100, u: 200 },
      { a: "x", b: "z", n: 1, total: 4, f: 100, u: 100 },
      { a: "q", b: "r", n: 1, total: 4, f: 150, u: 150 },
    ]);
    expect(through(db)).toBe(4);
    expect(st.maxId()).toBe(4);
    expect(st.delta({ after: 2, upTo: 3 })).toEqual([
      { a: "x", b: "y", n: 1, total: 3, firstMs: 200, updatedMs: 200, lastEventMs: 200 },
    ]);
    expect(st.rows()).toHaveLength(4);
    // The live series in keyset pages (a paged export): folded first, each once, after the id given.
    add(db, [["p", "p", 1, 300]]);
    const live = { eventSinceMs: 150, updatedSinceMs: Number.POSITIVE_INFINITY };
    const first = [...st.livePage(live, { afterId: 0, limit: 2 })];
    expect(first).toEqual([
      { id: 1, a: "x", b: "y" },
      { id: 3, a: "q", b: "r" },
    ]);
    expect([...st.livePage(live, { afterId: 3, limit: 2 })]).toEqual([{ id: 4, a: "p", b: "p" }]);
    expect(through(db)).toBe(5);
  });

  it("folds in the caller's transaction: rolled back, neither the sums nor the point move", () => {
    const db = table();
    const st = store(db);
    add(db, [["x", "y", 2, 100]]);
    expect(() =>
      db.transaction(() => {
        expect(st.fold()).toBe(1);
        throw new Error("crash before COMMIT");
      })(),
    ).toThrow("crash before COMMIT");
    expect(db.prepare("SELECT COUNT(*) AS n FROM s").get()).toEqual({ n: 0 });
    expect(through(db)).toBe(0);
    expect(st.series()).toEqual([{ a: "x", b: "y", n: 1, total: 2, f: 100, u: 100 }]);
  });

  it("a ledger from before the fold (v6 and older) has current series: nothing is folded", () => {
    const db = table();
    add(db, [["x", "y", 2, 100]]);
    expect(store(db, false).fold()).toBe(0);
    expect(store(db, false).series()).toEqual([]);
    expect(through(db)).toBe(0);
  });

  it("a read-only view refuses a read that would need a fold, and reads current series", () => {
    const dir = mkdtempSync(join(tmpdir(), "series-store-"));
    try {
      const path = join(dir, "l.db");
      const w = table();
      add(w, [["x", "y", 2, 100]]);
      w.exec(`VACUUM INTO '${path}'`);
      w.close();
      const ro = new Database(path, { readonly: true });
      expect(() => store(ro).series()).toThrow(/read-only ledger view are folded through id 0 of 1/);
      ro.close();
      const rw = new Database(path);
      store(rw).fold();
      rw.close();
      const again = new Database(path, { readonly: true });
      expect(store(again).series()).toEqual([{ a: "x", b: "y", n: 1, total: 2, f: 100, u: 100 }]);
      again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("prepares each side once, at first use, and no read where the tables are absent", () => {
    const db = table();
    let w = 0;
    let r = 0;
    const st = lazyStatements(
      db,
      true,
      (d) => {
        w++;
        return writes(d);
      },
      (d) => {
        r++;
        return reads(d);
      },
    );
    expect([w, r]).toEqual([0, 0]);
    st.writes();
    st.writes();
    st.reads();
    expect([w, r]).toEqual([1, 1]);
    const absent = new SeriesStore(
      new Database(":memory:"),
      false,
      true,
      "edit",
      writes,
      (): ReturnType<typeof reads> => {
        throw new Error("no table to prepare against");
      },
    );
    expect(absent.fold()).toBe(0);
    expect(absent.series()).toEqual([]);
    expect(absent.maxId()).toBe(0);
    expect(absent.rows()).toEqual([]);
    expect([...absent.live({ eventSinceMs: 0, updatedSinceMs: 0 })]).toEqual([]);
    expect([...absent.livePage({ eventSinceMs: 0, updatedSinceMs: 0 }, { afterId: 0, limit: 5 })]).toEqual(
      [],
    );
  });

  it("clamps times to SQLite integers", () => {
    expect(clampMs(12.7)).toBe(12);
    expect(clampMs(Number.NEGATIVE_INFINITY)).toBe(Number.MIN_SAFE_INTEGER);
    expect(clampMs(Number.POSITIVE_INFINITY)).toBe(Number.MAX_SAFE_INTEGER);
  });
});
