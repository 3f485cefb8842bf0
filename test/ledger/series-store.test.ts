/** What the edits and activity tables share (src/ledger/delivered/series-store.ts). */
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import {
  clampMs,
  idReads,
  type KeyedSum,
  lazyStatements,
  SeriesStore,
  SeriesSums,
} from "../../src/ledger/delivered/series-store.ts";

interface Sum extends KeyedSum {
  n: number;
  total: number;
}

class Sums extends SeriesSums<Sum> {
  constructor() {
    super((key) => ({ key, n: 0, total: 0 }));
  }
  add(a: string, b: string, v: number): void {
    const s = this.of([a, b]);
    s.n++;
    s.total += v;
  }
}

function table(): Database.Database {
  const db = new Database(":memory:");
  db.exec(`CREATE TABLE edits (id INTEGER PRIMARY KEY, a TEXT, b TEXT, v INTEGER);
    CREATE TABLE s (id INTEGER PRIMARY KEY, a TEXT, b TEXT, n INTEGER, total INTEGER, at INTEGER, UNIQUE (a, b))`);
  return db;
}

const writes = (db: Database.Database) => ({
  series: db.prepare(
    `INSERT INTO s (a, b, n, total, at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (a, b) DO UPDATE SET n = n + excluded.n, total = total + excluded.total, at = excluded.at`,
  ),
});
const reads = (db: Database.Database) => ({
  all: db.prepare("SELECT a, b, n, total, at FROM s ORDER BY id"),
  live: db.prepare("SELECT a, b FROM s WHERE at >= @eventSince OR at >= @updatedSince ORDER BY id"),
  delta: db.prepare(
    "SELECT a, b, SUM(v) AS total FROM edits WHERE id > @after AND id <= @upTo GROUP BY a, b",
  ),
  ...idReads(db, "edits"),
});

describe("series store", () => {
  it("sums records by the values of their key, one sum per distinct key", () => {
    const sums = new Sums();
    sums.add("x", "y", 2);
    sums.add("x", "y", 3);
    sums.add("x", "z", 5);
    // Values are joined with a separator: ("xy", "") is not ("x", "y")'s series.
    sums.add("xy", "", 1);
    expect([...sums.values()].map((s) => [s.key, s.n, s.total])).toEqual([
      [["x", "y"], 2, 5],
      [["x", "z"], 1, 5],
      [["xy", ""], 1, 1],
    ]);
  });

  it("flushes each sum with the arguments its table gives, adding to what the series held", () => {
    const db = table();
    const store = new SeriesStore<
      Record<string, unknown>,
      ReturnType<typeof writes>,
      ReturnType<typeof reads>,
      Sum
    >(db, true, writes, reads, (s, nowMs) => [...s.key, s.n, s.total, nowMs]);
    const one = new Sums();
    one.add("x", "y", 2);
    one.add("x", "z", 4);
    store.flush(one, 100);
    const two = new Sums();
    two.add("x", "y", 3);
    store.flush(two, 200);
    expect(store.series()).toEqual([
      { a: "x", b: "y", n: 2, total: 5, at: 200 },
      { a: "x", b: "z", n: 1, total: 4, at: 100 },
    ]);
    expect([...store.live({ eventSinceMs: 150, updatedSinceMs: Number.POSITIVE_INFINITY })]).toEqual([
      { a: "x", b: "y" },
    ]);
    db.prepare("INSERT INTO edits (a, b, v) VALUES ('x', 'y', 1), ('x', 'y', 2), ('q', 'r', 4)").run();
    expect(store.maxId()).toBe(3);
    expect(store.delta({ after: 1, upTo: 2 })).toEqual([{ a: "x", b: "y", total: 2 }]);
    expect(store.rows()).toHaveLength(3);
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
      writes,
      (): ReturnType<typeof reads> => {
        throw new Error("no table to prepare against");
      },
      (s: Sum, nowMs: number) => [...s.key, nowMs],
    );
    expect(absent.series()).toEqual([]);
    expect(absent.maxId()).toBe(0);
    expect(absent.rows()).toEqual([]);
    expect([...absent.live({ eventSinceMs: 0, updatedSinceMs: 0 })]).toEqual([]);
  });

  it("clamps times to SQLite integers", () => {
    expect(clampMs(12.7)).toBe(12);
    expect(clampMs(Number.NEGATIVE_INFINITY)).toBe(Number.MIN_SAFE_INTEGER);
    expect(clampMs(Number.POSITIVE_INFINITY)).toBe(Number.MAX_SAFE_INTEGER);
  });
});
