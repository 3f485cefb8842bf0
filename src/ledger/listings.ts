import type Database from "better-sqlite3";
import type { ListingStore, StoredListing } from "../adapter/listings.ts";

/** path, mark, taken_ms, entries. */
type ListingRow = [string, string, number, string];

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
      // Rows as arrays: a scope holds one row per session folder (10,000 and more), read per process.
      load: db.prepare("SELECT path, mark, taken_ms, entries FROM listings WHERE scope = @scope").raw(true),
      put: db.prepare(
        `INSERT INTO listings (scope, path, mark, taken_ms, entries) VALUES (@scope, @path, @mark, @takenMs, @entries)
         ON CONFLICT (scope, path) DO UPDATE SET mark = excluded.mark, taken_ms = excluded.taken_ms,
           entries = excluded.entries`,
      ),
      drop: db.prepare("DELETE FROM listings WHERE scope = @scope AND path = @path"),
    };
    this.saveAll = db.transaction(
      (scope: string, put: ReadonlyMap<string, StoredListing>, drop: readonly string[]) => {
        for (const path of drop) this.st.drop.run({ scope, path });
        for (const [path, l] of put) {
          this.st.put.run({ scope, path, mark: l.mark, takenMs: l.takenMs, entries: l.entries });
        }
      },
    );
  }

  load(scope: string): Map<string, StoredListing> {
    const out = new Map<string, StoredListing>();
    for (const [path, mark, takenMs, entries] of this.st.load.iterate({
      scope,
    }) as IterableIterator<ListingRow>) {
      out.set(path, { mark, takenMs, entries });
    }
    return out;
  }

  save(scope: string, put: ReadonlyMap<string, StoredListing>, drop: readonly string[]): void {
    this.saveAll(scope, put, drop);
  }
}
