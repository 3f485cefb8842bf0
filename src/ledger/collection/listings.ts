import type Database from "better-sqlite3";
import type { ListingStore, StoredListing } from "../../adapter/listings.ts";

/** A stored listing with its path (the extra field is harmless where a StoredListing is read). */
type ListingRow = StoredListing & { readonly path: string };

/**
 * Persisted directory listings (src/adapter/listings.ts): a cache of what the agent's directories
 * held, so a new process stats a directory instead of listing it again. Not progress: losing or
 * clearing it costs one full walk, never an event; it is written outside the commits of events.
 */
export class Listings implements ListingStore {
  private readonly st;
  private readonly saveAll: (
    scope: string,
    put: ReadonlyMap<string, StoredListing>,
    drop: readonly string[],
  ) => void;

  constructor(db: Database.Database) {
    this.st = {
      // A scope holds one row per session folder (10,000 and more), read per process: each row object
      // is the listing itself (columns named as its fields), no second object per row.
      load: db.prepare("SELECT path, mark, taken_ms AS takenMs, entries FROM listings WHERE scope = @scope"),
      put: db.prepare(
        `INSERT INTO listings (scope, path, mark, taken_ms, entries) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (scope, path) DO UPDATE SET mark = excluded.mark, taken_ms = excluded.taken_ms,
           entries = excluded.entries`,
      ),
      drop: db.prepare("DELETE FROM listings WHERE scope = @scope AND path = @path"),
      one: db.prepare("SELECT mark, taken_ms AS takenMs, entries FROM listings WHERE scope = ? AND path = ?"),
    };
    this.saveAll = db.transaction(
      (scope: string, put: ReadonlyMap<string, StoredListing>, drop: readonly string[]) => {
        for (const path of drop) this.st.drop.run({ scope, path });
        for (const [path, l] of put) {
          // By position (a row per session folder of a first walk).
          this.st.put.run(scope, path, l.mark, l.takenMs, l.entries);
        }
      },
    );
  }

  load(scope: string): Map<string, StoredListing> {
    const out = new Map<string, StoredListing>();
    // all(), not iterate(): one call into SQLite instead of one per row, half the time here.
    for (const row of this.st.load.all({ scope }) as ListingRow[]) out.set(row.path, row);
    return out;
  }

  loadOne(scope: string, path: string): StoredListing | undefined {
    return this.st.one.get(scope, path) as StoredListing | undefined;
  }

  save(scope: string, put: ReadonlyMap<string, StoredListing>, drop: readonly string[]): void {
    this.saveAll(scope, put, drop);
  }
}
