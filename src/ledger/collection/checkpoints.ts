import type Database from "better-sqlite3";
import type { SourceCheckpoint } from "../../adapter/types.ts";

interface CheckpointRow {
  path: string;
  size: number;
  mtime_ns: string;
  ino: number;
  dev: number;
}

const toCheckpoint = (r: CheckpointRow): SourceCheckpoint => ({
  path: r.path,
  size: r.size,
  mtimeNs: r.mtime_ns,
  ino: r.ino,
  dev: r.dev,
});

/**
 * The caller's string equal to `path`, when it has one (a source's path): a daemon holds the
 * checkpoints between passes, and each path then once instead of a second copy read from SQLite
 * (38,888 of them at 30,000 sessions, ~4.4 MB; docs/performance.md, "One string per path").
 */
export type PathOf = (path: string) => string | undefined;

/**
 * One checkpoint per source (fileconsumer vocabulary): what was read, so an unchanged file is skipped.
 *
 * A writer (`hold`) keeps what it loaded between passes: the checkpoints change only by this
 * connection's own writes (the ledger's single-writer lock keeps every other process out), so an
 * idle daemon's sweep over 10,000 sources looks them up in memory instead of loading 10,000 rows
 * (and collecting them as garbage) every minute. Every write drops what is held (`put`, `delete`),
 * and nothing is held from a read inside a transaction, whose writes may still be rolled back.
 */
export class Checkpoints {
  private readonly st;
  private held: ReadonlyMap<string, SourceCheckpoint> | undefined;
  /** Each adapter's checkpoint paths, as `prune` last read them (held like `held`). */
  private readonly heldPaths = new Map<string, readonly string[]>();

  constructor(
    private readonly db: Database.Database,
    private readonly hold = false,
  ) {
    const cols = "path, size, mtime_ns, ino, dev";
    this.st = {
      get: db.prepare(`SELECT ${cols} FROM checkpoints WHERE path = @path`),
      // One per document (12,950 in an idle `report` of 10,000 sessions), read per pass: each row
      // object is the checkpoint itself (columns named as its fields), no second object per row.
      all: db.prepare("SELECT path, size, mtime_ns AS mtimeNs, ino, dev FROM checkpoints"),
      // By position (one per source of every commit): see `put`.
      put: db.prepare(
        `INSERT INTO checkpoints (path, adapter, size, mtime_ns, ino, dev, updated_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (path) DO UPDATE SET adapter = excluded.adapter, size = excluded.size,
           mtime_ns = excluded.mtime_ns, ino = excluded.ino, dev = excluded.dev, updated_ms = excluded.updated_ms`,
      ),
      pathsOf: db.prepare("SELECT path FROM checkpoints WHERE adapter = @adapter").pluck(),
      // Each sum of the low 32 bits: no overflow below ~2^31 rows (SQLite's sum() throws on one).
      token: db
        .prepare(
          `SELECT count(*), max(updated_ms), sum(updated_ms & 4294967295), sum(size & 4294967295),
             sum(ino & 4294967295), sum(CAST(mtime_ns AS INTEGER) & 4294967295)
           FROM checkpoints WHERE adapter = ?`,
        )
        .raw(),
      delete: db.prepare("DELETE FROM checkpoints WHERE path = @path AND adapter = @adapter"),
    };
  }

  /** Whether what a read returns now may be held: a writer's, outside any transaction. */
  private holdable(): boolean {
    return this.hold && !this.db.inTransaction;
  }

  private dropHeld(): void {
    this.held = undefined;
    this.heldPaths.clear();
  }

  /**
   * Every checkpoint in one query: a pass over thousands of sources looks them up in memory.
   * `pathOf`: the caller's own string for a path it knows (PathOf), taken as the checkpoint's path.
   */
  all(pathOf?: PathOf): ReadonlyMap<string, SourceCheckpoint> {
    if (this.held !== undefined) return this.held;
    const out = new Map<string, SourceCheckpoint>();
    // all(), not iterate(): one call into SQLite instead of one per row (see Listings.load).
    for (const cp of this.st.all.all() as { path: string }[]) {
      const own = pathOf?.(cp.path);
      if (own !== undefined) cp.path = own;
      out.set(cp.path, cp as SourceCheckpoint);
    }
    if (this.holdable()) this.held = out;
    return out;
  }

  /**
   * A summary of `adapter`'s checkpoints (KnownCheckpoints.token) read by one aggregate, with no
   * row brought into JavaScript: their count, the latest and the sum of their `updated_ms`, and
   * the sums of their sizes, inodes and mtimes. A delete changes the count; a put stamps its
   * row with the commit's clock and its new fingerprint. Its limit: puts in the very millisecond
   * of the puts they replace (so `updated_ms` sums the same) whose sizes, inodes and mtimes
   * also sum to the same totals: a re-put of the same fingerprint (nothing changed to see), or
   * several rewrites whose changes cancel out within one millisecond.
   */
  token(adapter: string): string {
    return (this.st.token.get(adapter) as unknown[]).join(":");
  }

  get(path: string): SourceCheckpoint | undefined {
    const r = this.st.get.get({ path }) as CheckpointRow | undefined;
    return r && toCheckpoint(r);
  }

  /** Called inside the transaction that commits the source's rows. */
  put(cp: SourceCheckpoint, adapter: string, nowMs: number): void {
    this.dropHeld();
    // In the INSERT's column order: no parameter object, no lookup by name (docs/performance.md,
    // "The cold backfill's per-row cost").
    this.st.put.run(cp.path, adapter, cp.size, cp.mtimeNs, cp.ino, cp.dev, nowMs);
  }

  /**
   * The checkpoint paths of `adapter` for files that are gone: not in `live` and not under a dir
   * in `keepUnder` (dirs that could not be listed, whose files may still exist). Reads only.
   */
  gone(adapter: string, live: ReadonlySet<string>, keepUnder: readonly string[]): string[] {
    let paths = this.heldPaths.get(adapter);
    if (paths === undefined) {
      paths = this.st.pathsOf.all({ adapter }) as string[];
      if (this.holdable()) this.heldPaths.set(adapter, paths);
    }
    const under = keepUnder.map((d) => (d.endsWith("/") ? d : `${d}/`));
    const out: string[] = [];
    for (const path of paths) {
      if (live.has(path) || under.some((d) => path.startsWith(d))) continue;
      out.push(path);
    }
    return out;
  }

  /** Deletes `adapter`'s checkpoints of `paths`; the caller's transaction. */
  delete(adapter: string, paths: readonly string[]): number {
    if (paths.length === 0) return 0;
    this.dropHeld();
    let n = 0;
    for (const path of paths) n += this.st.delete.run({ path, adapter }).changes;
    return n;
  }
}
