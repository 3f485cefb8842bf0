/**
 * What the two tables of what Cline delivered (edits.ts, activity.ts) share: their running series
 * folded from their records when read (schema v7, tables/series-folds-v7.ts), statements prepared
 * once at their first use (the reads only where the tables exist), the cumulative TTL's parameters,
 * and the id-window reads (the highest id, every row).
 */
import type Database from "better-sqlite3";
import type { IdWindow, LiveFilter, SeriesPage } from "../usage/series.ts";

/** Schema version from which the series are folded at read, not upserted per commit (tables/series-folds-v7.ts). */
export const SERIES_FOLDS_VERSION = 7;

/** A series table's name in `series_folds`. */
export type FoldName = "edit" | "activity";

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

/** The write both tables prepare besides their inserts: the fold of an id window into the series. */
export interface SeriesWrites {
  /**
   * INSERT ... SELECT: the records with @after < id <= @upTo summed per series (the delta exporter's
   * aggregate of that window, `delta`) and added to the series table, a new series appended.
   */
  readonly fold: Database.Statement;
}

/**
 * The reads both tables prepare: every series, the live ones, a keyset page of them (`id` first, with
 * @afterId and @limit), one id window's, the highest id, every row.
 */
export interface SeriesReads extends ReturnType<typeof idReads> {
  readonly all: Database.Statement;
  readonly live: Database.Statement;
  readonly page: Database.Statement;
  readonly delta: Database.Statement;
}

/**
 * The SQL of a fold (SeriesWrites.fold): `delta`'s rows, in its column order (the series key, then the
 * sums, then first_ms, updated_ms, last_event_ms), into `table`; a series already there adds each
 * `sums` column and keeps the newest times. `WHERE true`: SQLite's rule for an upsert whose SELECT
 * could otherwise read the ON CONFLICT as a join's.
 */
export function foldSql(
  table: string,
  key: readonly string[],
  sums: readonly string[],
  delta: string,
): string {
  const k = key.join(", ");
  return `INSERT INTO ${table} (${k}, ${sums.join(", ")}, first_ms, updated_ms, last_event_ms)
    SELECT * FROM (${delta}) WHERE true
    ON CONFLICT (${k}) DO UPDATE SET ${sums.map((c) => `${c} = ${c} + excluded.${c}`).join(", ")},
      updated_ms = max(updated_ms, excluded.updated_ms), last_event_ms = max(last_event_ms, excluded.last_event_ms)`;
}

/**
 * A table of records kept exactly once and its running series: the reads the exporters, `report` and
 * the tests make of it, the same for both tables. From schema v7 the series are folded from the
 * records at read (`fold`): a commit writes the records alone. Rows are `Row`s as the statements
 * name their columns.
 */
export class SeriesStore<Row, W extends SeriesWrites, R extends SeriesReads> {
  protected readonly st: Statements<W, R>;
  private point: { readonly through: Database.Statement; readonly advance: Database.Statement } | undefined;
  private readonly foldTx: (upTo: number) => number;

  /**
   * `present`: false on a read-only view of a ledger from before the tables. `folded`: the ledger is at
   * SERIES_FOLDS_VERSION or later (before it, every commit upserted the series: they are current).
   */
  constructor(
    private readonly db: Database.Database,
    readonly present: boolean,
    private readonly folded: boolean,
    private readonly name: FoldName,
    prepareWrites: (db: Database.Database) => W,
    prepareReads: (db: Database.Database) => R,
  ) {
    this.st = lazyStatements(db, present, prepareWrites, prepareReads);
    // The fold and its new point in one transaction (a savepoint inside a caller's): both or neither.
    this.foldTx = db.transaction((upTo: number) => {
      const p = this.points();
      const after = (p.through.get({ name: this.name }) as { throughId: number }).throughId;
      if (upTo <= after) return 0;
      this.st.writes().fold.run({ after, upTo });
      p.advance.run({ name: this.name, upTo });
      return upTo - after;
    });
  }

  private points() {
    this.point ??= {
      through: this.db.prepare("SELECT through_id AS throughId FROM series_folds WHERE name = @name"),
      advance: this.db.prepare("UPDATE series_folds SET through_id = @upTo WHERE name = @name"),
    };
    return this.point;
  }

  /**
   * Sums the records not folded yet into their series, exactly once (schema v7); returns how many ids
   * it folded (0: the series were current). Every read of the series folds first; an exporter calls it
   * before its cumulative reads (src/export/producer.ts). A read-only view cannot write its fold: it
   * reads the report's rollup, never these series, so a read that would need one is refused.
   */
  fold(): number {
    if (!this.present || !this.folded) return 0;
    const upTo = this.maxId();
    if (!this.db.readonly) return this.foldTx(upTo);
    const after = (this.points().through.get({ name: this.name }) as { throughId: number }).throughId;
    if (upTo > after)
      throw new Error(
        `the ${this.name} series of a read-only ledger view are folded through id ${after} of ${upTo}: only the writer folds them`,
      );
    return 0;
  }

  /** Every series (tests, audits). */
  series(): Row[] {
    this.fold();
    return (this.st.reads()?.all.all() ?? []) as Row[];
  }

  /** The series the cumulative TTL keeps, one row at a time. */
  *live(f: LiveFilter): IterableIterator<Row> {
    this.fold();
    const r = this.st.reads();
    if (r !== undefined) yield* r.live.iterate(liveParams(f)) as IterableIterator<Row>;
  }

  /** One keyset page of `live`: series with id > afterId, at most limit, each with its id (a paged export). */
  *livePage(f: LiveFilter, page: SeriesPage): IterableIterator<Row & { readonly id: number }> {
    this.fold();
    const r = this.st.reads();
    if (r !== undefined)
      yield* r.page.iterate({ ...liveParams(f), ...page }) as IterableIterator<Row & { id: number }>;
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
