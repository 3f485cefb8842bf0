/**
 * What the two tables of what Cline delivered (edits.ts, activity.ts) share: per-commit sums by series
 * key, statements prepared once at their first use (the reads only where the tables exist), the
 * cumulative TTL's parameters, and the id-window reads (the highest id, every row).
 */
import type Database from "better-sqlite3";
import type { IdWindow, LiveFilter } from "../usage/series.ts";

/**
 * A series' running sum in one commit: its key column values, in the order of the table's series key
 * (EDIT_SERIES_KEY, ACTIVITY_SERIES_KEY: the upsert binds them positionally), and what the caller adds up.
 */
export interface KeyedSum {
  readonly key: readonly string[];
}

/** Per-commit running sums by series key: one upsert per distinct series, not one per record. */
export class SeriesSums<S extends KeyedSum> {
  private readonly sums = new Map<string, S>();

  /** `fresh`: a series' sum before its first record. */
  constructor(private readonly fresh: (key: readonly string[]) => S) {}

  /** The sum of `key`'s series, started on first use. */
  protected of(key: readonly string[]): S {
    const id = key.join("\u0000");
    let s = this.sums.get(id);
    if (s === undefined) {
      s = this.fresh(key);
      this.sums.set(id, s);
    }
    return s;
  }

  values(): IterableIterator<S> {
    return this.sums.values();
  }
}

export interface Statements<W, R> {
  readonly writes: () => W;
  /** undefined on a read-only view of a ledger from before the tables (`present` false). */
  readonly reads: () => R | undefined;
}

/** Statements prepared once, at their first use: a pass that writes nothing prepares no write. */
export function lazyStatements<W, R>(
  db: Database.Database,
  present: boolean,
  prepareWrites: (db: Database.Database) => W,
  prepareReads: (db: Database.Database) => R,
): Statements<W, R> {
  let w: W | undefined;
  let r: R | undefined;
  return {
    writes: () => {
      w ??= prepareWrites(db);
      return w;
    },
    reads: () => {
      if (!present) return undefined;
      r ??= prepareReads(db);
      return r;
    },
  };
}

/** A time as an SQLite integer: ±Infinity to the safe integer range's end. */
export const clampMs = (ms: number): number =>
  Number.isFinite(ms) ? Math.trunc(ms) : ms > 0 ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER;

/** The named parameters of a live-series query (`@eventSince`, `@updatedSince`). */
export const liveParams = (f: LiveFilter): { eventSince: number; updatedSince: number } => ({
  eventSince: clampMs(f.eventSinceMs),
  updatedSince: clampMs(f.updatedSinceMs),
});

/** The statements of a table's highest id and of its rows. */
export function idReads(db: Database.Database, table: "edits" | "activity") {
  return {
    maxId: db.prepare(`SELECT IFNULL(MAX(id), 0) AS max FROM ${table}`),
    rows: db.prepare(`SELECT * FROM ${table} ORDER BY id`),
  };
}

/** The write both tables prepare besides their inserts: a series' upsert. */
export interface SeriesWrites {
  readonly series: Database.Statement;
}

/** The reads both tables prepare: every series, the live ones, one id window's, the highest id, every row. */
export interface SeriesReads extends ReturnType<typeof idReads> {
  readonly all: Database.Statement;
  readonly live: Database.Statement;
  readonly delta: Database.Statement;
}

/**
 * A table of records kept exactly once and summed into its running series: the reads the exporters,
 * `report` and the tests make of it, the same for both tables. Rows are `Row`s as the statements
 * name their columns.
 */
export class SeriesStore<Row, W extends SeriesWrites, R extends SeriesReads, S extends KeyedSum> {
  protected readonly st: Statements<W, R>;

  /**
   * `present`: false on a read-only view of a ledger from before the tables. `seriesArgs`: a sum's
   * arguments to the `series` upsert, in its parameters' order (positional: named parameters cost a
   * property lookup each from native code, docs/performance.md "Signals ingest").
   */
  constructor(
    db: Database.Database,
    readonly present: boolean,
    prepareWrites: (db: Database.Database) => W,
    prepareReads: (db: Database.Database) => R,
    private readonly seriesArgs: (s: S, nowMs: number) => unknown[],
  ) {
    this.st = lazyStatements(db, present, prepareWrites, prepareReads);
  }

  /** Writes a commit's series sums (inside its transaction, after its inserts). */
  flush(sums: SeriesSums<S>, nowMs: number): void {
    const { series } = this.st.writes();
    for (const s of sums.values()) series.run(this.seriesArgs(s, nowMs));
  }

  /** Every series (tests, audits, report). */
  series(): Row[] {
    return (this.st.reads()?.all.all() ?? []) as Row[];
  }

  /** The series the cumulative TTL keeps, one row at a time. */
  *live(f: LiveFilter): IterableIterator<Row> {
    const r = this.st.reads();
    if (r !== undefined) yield* r.live.iterate(liveParams(f)) as IterableIterator<Row>;
  }

  /** The records of one id window aggregated per series (delta). */
  delta(w: IdWindow): Row[] {
    return (this.st.reads()?.delta.all(w) ?? []) as Row[];
  }

  /** The highest record id (0: none): a delta exporter's next watermark candidate. */
  maxId(): number {
    return (this.st.reads()?.maxId.get() as { max: number } | undefined)?.max ?? 0;
  }

  /** The records by row (tests, audits). */
  rows(): Record<string, unknown>[] {
    return (this.st.reads()?.rows.all() ?? []) as Record<string, unknown>[];
  }
}
