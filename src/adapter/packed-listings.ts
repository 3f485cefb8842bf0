/**
 * A listing memo (listings.ts) whose whole scope is ONE stored entry: for a scope of thousands of
 * directories (Cline's session folders, 10,000 and more), loaded by every process. One row and one
 * JSON.parse instead of a row object and four strings per directory from SQLite: measured on the
 * 10,000-session tree, the idle `report` (docs/performance.md, issue 30). The price: a change of
 * any listing writes the whole scope again (~0.7 MB at 10,000 folders), which happens when a
 * folder was added, removed or re-listed, not per pass.
 *
 * The entry is the store's row at PACKED_KEY (not a directory: every listed path is absolute),
 * its mark PACKED_MARK, its entries `[[path, mark, takenMs, entries], ...]`. Rows of the scope
 * stored one per path (by a version before this one) are read too, and dropped by the next flush,
 * which writes them into the entry: the upgrade needs no schema step, and a listing written by an
 * older process beside the entry is still used (the later of the two by takenMs: either is true
 * for its own mark, which listingHolds compares).
 */
import type { ListingMemo, ListingStore, StoredListing } from "./listings.ts";

export const PACKED_KEY = "*packed";
export const PACKED_MARK = "packed:1";

/** The listings of a packed entry's `entries`, or undefined when it is not one this version wrote. */
export function unpackListings(entries: string): Map<string, StoredListing> | undefined {
  let v: unknown;
  try {
    v = JSON.parse(entries);
  } catch (e) {
    // A damaged entry is no entry: every directory is listed again, and the entry rewritten.
    if (e instanceof SyntaxError) return undefined;
    throw e;
  }
  if (!Array.isArray(v)) return undefined;
  const out = new Map<string, StoredListing>();
  for (const x of v) {
    if (!Array.isArray(x) || x.length !== 4) return undefined;
    const [path, mark, takenMs, listed] = x as unknown[];
    if (typeof path !== "string" || typeof mark !== "string" || typeof listed !== "string") return undefined;
    if (typeof takenMs !== "number") return undefined;
    out.set(path, { mark, takenMs, entries: listed });
  }
  return out;
}

export function packListings(all: ReadonlyMap<string, StoredListing>): string {
  const rows: [string, string, number, string][] = [];
  for (const [p, l] of all) rows.push([p, l.mark, l.takenMs, l.entries]);
  return JSON.stringify(rows);
}

export function packedListingMemo(
  scope: string,
  store: ListingStore | undefined,
  now: () => number = Date.now,
): ListingMemo {
  let all: Map<string, StoredListing> | undefined;
  /** Paths put or dropped since the last flush. */
  const changed = new Set<string>();
  /** Rows stored one per path (an older version's), dropped by the next flush. */
  let legacy: string[] = [];
  const loaded = (): Map<string, StoredListing> => {
    if (all !== undefined) return all;
    const rows = store?.load(scope) ?? new Map<string, StoredListing>();
    const packed = rows.get(PACKED_KEY);
    all = (packed?.mark === PACKED_MARK ? unpackListings(packed.entries) : undefined) ?? new Map();
    for (const [p, l] of rows) {
      if (p === PACKED_KEY) continue;
      legacy.push(p);
      const have = all.get(p);
      if (have === undefined || l.takenMs > have.takenMs)
        all.set(p, { mark: l.mark, takenMs: l.takenMs, entries: l.entries });
    }
    return all;
  };
  return {
    now,
    get: (path) => loaded().get(path),
    put(path, listing) {
      loaded().set(path, listing);
      changed.add(path);
    },
    drop(path) {
      if (loaded().delete(path)) changed.add(path);
    },
    paths: () => loaded().keys(),
    flush() {
      const n = changed.size;
      if (n === 0 && legacy.length === 0) return 0;
      if (store !== undefined) {
        const entry: StoredListing = { mark: PACKED_MARK, takenMs: now(), entries: packListings(loaded()) };
        store.save(scope, new Map([[PACKED_KEY, entry]]), legacy);
      }
      changed.clear();
      legacy = [];
      return n;
    },
    pending: () => changed.size + legacy.length,
  };
}
