/**
 * Persisted directory listings, for every adapter: what a directory held when it was last listed,
 * kept with the directory's mark, so a later process pays one stat for an unchanged directory
 * instead of a readdir. The ledger stores them (src/ledger/collection/listings.ts, never anything under the
 * agent's own directories); the adapter decides which directories and what of their entries.
 *
 * Why a stat is enough: adding, removing or renaming an entry changes the directory's mtime and
 * ctime, and those changes are exactly the changes of its listing. (A file rewritten in place does
 * not change its directory: its own stat, by the collector, answers for it.) Two traps are covered:
 *   - timestamp granularity: a change within the same clock tick as the listing would leave the
 *     mark equal, so a listing taken less than LISTING_CONFIRM_MS after the directory's last change
 *     is unconfirmed and listed again (by then, any later change shows as a newer time);
 *   - a restored or `touch -d`-ed directory whose mtime went back: the mark is compared for
 *     equality (never "newer than"), and holds the ctime, which no user can set, and the inode.
 */
import type { Stats } from "node:fs";

/** One directory's stored listing. `entries` is the adapter's own encoding of what it keeps. */
export interface StoredListing {
  /** The directory's mark when it was listed (see dirMark). */
  readonly mark: string;
  /** Wall-clock ms taken before the stat that gave `mark` (never after: see listingHolds). */
  readonly takenMs: number;
  readonly entries: string;
}

/** Where listings persist: one map of path to listing per `scope` (an adapter's own namespace). */
export interface ListingStore {
  load(scope: string): Map<string, StoredListing>;
  /** One path's listing of `scope` (absent: `load(scope).get(path)`, see loadListing). */
  loadOne?(scope: string, path: string): StoredListing | undefined;
  /** Stores `put` and deletes `drop`, in one transaction. */
  save(scope: string, put: ReadonlyMap<string, StoredListing>, drop: readonly string[]): void;
}

/**
 * One stored listing, without loading the rest of its scope where the store can (a scope keyed by
 * a root holds an entry per root the ledger ever saw: another HOME's, megabytes each).
 */
export function loadListing(store: ListingStore, scope: string, path: string): StoredListing | undefined {
  return store.loadOne === undefined ? store.load(scope).get(path) : store.loadOne(scope, path);
}

/**
 * How long after a directory's last change a listing of it is trusted. Filesystem times are
 * coarse (a kernel tick on ext4, 1-2 s on FAT, SMB and some NFS setups): 2 s covers them all.
 */
export const LISTING_CONFIRM_MS = 2000;

/** A directory's identity and change times, as one string (plain stat numbers: no bigint needed). */
export function dirMark(s: Stats): string {
  // join, not a template: V8 keeps a template of this length as a rope of ~7 strings, and a
  // backfill's walk keeps one mark per session folder (~4 MB more at 30,000 folders).
  return [s.dev, s.ino, s.mtimeMs, s.ctimeMs].join(":");
}

/**
 * Whether `stored` still describes the directory whose stat is `s`: the same mark, and the
 * listing confirmed, i.e. taken at least LISTING_CONFIRM_MS after the directory last changed.
 */
export function listingHolds(stored: StoredListing | undefined, s: Stats): stored is StoredListing {
  return (
    stored !== undefined &&
    stored.takenMs - Math.max(s.mtimeMs, s.ctimeMs) >= LISTING_CONFIRM_MS &&
    sameMark(stored.mark, s)
  );
}

/**
 * `mark === dirMark(s)`, without formatting four numbers per directory (the walk asks it of every
 * session folder): a number's shortest decimal form parses back to exactly that number, so the
 * stored fields compare equal as numbers exactly when the strings would.
 */
export function sameMark(mark: string, s: Stats): boolean {
  const a = mark.indexOf(":");
  const b = mark.indexOf(":", a + 1);
  const c = mark.indexOf(":", b + 1);
  if (a < 0 || b < 0 || c < 0 || mark.indexOf(":", c + 1) >= 0) return false;
  return (
    Number(mark.slice(c + 1)) === s.ctimeMs &&
    Number(mark.slice(b + 1, c)) === s.mtimeMs &&
    Number(mark.slice(a + 1, b)) === s.ino &&
    Number(mark.slice(0, a)) === s.dev &&
    // Number("") is 0: an empty field is no mark.
    a > 0 &&
    b > a + 1 &&
    c > b + 1 &&
    c < mark.length - 1
  );
}

/**
 * The listings of one scope in memory, loaded from the store on first use and written back by
 * `flush` (changed and dropped ones only). Without a store it is an in-process memo only.
 */
export interface ListingMemo {
  /** The clock of `takenMs` (wall-clock ms). */
  now(): number;
  get(path: string): StoredListing | undefined;
  put(path: string, listing: StoredListing): void;
  drop(path: string): void;
  /** Every stored path (for pruning what is gone). */
  paths(): IterableIterator<string>;
  /** Writes what changed since the last flush; returns how many listings were written or dropped. */
  flush(): number;
  /** How many listings changed (put or dropped) since the last flush that wrote them. */
  pending(): number;
}

export function listingMemo(
  scope: string,
  store: ListingStore | undefined,
  now: () => number = Date.now,
): ListingMemo {
  let all: Map<string, StoredListing> | undefined;
  const put = new Map<string, StoredListing>();
  const drop = new Set<string>();
  const loaded = (): Map<string, StoredListing> => {
    all ??= store?.load(scope) ?? new Map();
    return all;
  };
  return {
    now,
    get: (path) => loaded().get(path),
    put(path, listing) {
      loaded().set(path, listing);
      put.set(path, listing);
      drop.delete(path);
    },
    drop(path) {
      if (!loaded().delete(path)) return;
      put.delete(path);
      drop.add(path);
    },
    paths: () => loaded().keys(),
    flush() {
      const n = put.size + drop.size;
      if (n > 0) store?.save(scope, put, [...drop]);
      put.clear();
      drop.clear();
      return n;
    },
    pending: () => put.size + drop.size,
  };
}
