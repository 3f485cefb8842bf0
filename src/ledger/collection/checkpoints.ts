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

/** One checkpoint per source (fileconsumer vocabulary): what was read, so an unchanged file is skipped. */
export class Checkpoints {
  private readonly st;

  constructor(db: Database.Database) {
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
      delete: db.prepare("DELETE FROM checkpoints WHERE path = @path AND adapter = @adapter"),
    };
  }

  /** Every checkpoint in one query: a pass over thousands of sources looks them up in memory. */
  all(): Map<string, SourceCheckpoint> {
    const out = new Map<string, SourceCheckpoint>();
    // all(), not iterate(): one call into SQLite instead of one per row (see Listings.load).
    for (const cp of this.st.all.all() as SourceCheckpoint[]) out.set(cp.path, cp);
    return out;
  }

  get(path: string): SourceCheckpoint | undefined {
    const r = this.st.get.get({ path }) as CheckpointRow | undefined;
    return r && toCheckpoint(r);
  }

  /** Called inside the transaction that commits the source's rows. */
  put(cp: SourceCheckpoint, adapter: string, nowMs: number): void {
    // In the INSERT's column order: no parameter object, no lookup by name (docs/performance.md,
    // "The cold backfill's per-row cost").
    this.st.put.run(cp.path, adapter, cp.size, cp.mtimeNs, cp.ino, cp.dev, nowMs);
  }

  /**
   * Drops the checkpoints of `adapter` for files that are gone: not in `live` and not under a
   * dir in `keepUnder` (dirs that could not be listed, whose files may still exist). The
   * caller's transaction.
   */
  prune(adapter: string, live: ReadonlySet<string>, keepUnder: readonly string[]): number {
    const under = keepUnder.map((d) => (d.endsWith("/") ? d : `${d}/`));
    let n = 0;
    for (const path of this.st.pathsOf.all({ adapter }) as string[]) {
      if (live.has(path) || under.some((d) => path.startsWith(d))) continue;
      n += this.st.delete.run({ path, adapter }).changes;
    }
    return n;
  }
}
