import { unchangedNow } from "../fingerprint.ts";
import { type ListingStore, listingMemo } from "../listings.ts";
import type { Adapter, Problem, Source, SourceCheckpoint } from "../types.ts";
import { BackgroundReader } from "./background-reader.ts";
import {
  CLINE_COMPACTIONS_ADAPTER_ID,
  collectCompactionIncremental,
  compactionSources,
} from "./compaction/collect.ts";
import {
  type DiscoveryMemos,
  discoverCline,
  discoveryMemos,
  flushDiscoveryMemos,
  walkFacts,
  walkSessions,
} from "./discover.ts";
import { discoveryHold, sameCompactions } from "./held-discovery.ts";
import { walkHold } from "./held-walk.ts";
import { cachedIndexReader, type IndexReader } from "./index-db.ts";
import type { ClinePaths } from "./paths.ts";
import { indexMarks, keepQuietEntry, QUIET_SCOPE, quietEntry, quietSources, UNBUILT_HINT } from "./quiet.ts";
import { encodeQuietTree, QUIET_TREE_SCOPE, quietTreeHolds } from "./quiet-tree.ts";
import { CLINE_ADAPTER_ID } from "./types.ts";

export { collectDocument } from "./document.ts";

export interface ClineAdapterOptions {
  /**
   * The process runs one pass and no other (`run --once`, `report`): nothing is kept in memory
   * for a next pass (the folders' listings, the last walk and discovery: ~1 KB a document), only
   * what this pass reads from the ledger and writes back to it.
   */
  readonly onePass?: boolean;
}

/**
 * `readIndex`: share one with the captures surface so the index is read once per change.
 * `listings`: where discovery's listings persist (the ledger's), so a new process stats the
 * session folders instead of listing them; without it they last as long as the adapter.
 */
export function createClineAdapter(
  paths: ClinePaths,
  readIndex: IndexReader = cachedIndexReader(),
  listings?: ListingStore,
  now: () => number = Date.now,
  opts: ClineAdapterOptions = {},
): Adapter {
  const keep = opts.onePass !== true;
  const kept = keep ? discoveryMemos(listings, now) : undefined;
  // One pass: loaded from the store by each discovery, written back, and let go with it.
  const memosNow = (): DiscoveryMemos => kept ?? discoveryMemos(listings, now);
  // The facts a quiet discovery relies on (quiet.ts); only with a store that outlives the process.
  const quiet = listings === undefined ? undefined : listingMemo(QUIET_SCOPE, listings, now);
  const sessionsDir = paths.sessions.path;
  // Documents are read in a worker thread while a backfill reads far ahead (background-reader.ts).
  const reader = new BackgroundReader();
  /** The checkpoints the last quiet discovery found its documents unchanged against (by stat). */
  let verified: ReadonlyMap<string, SourceCheckpoint> | undefined;
  /** The last full discovery, handed on while nothing it was built from changed (held-discovery.ts). */
  const hold = discoveryHold();
  /** The last walk, handed on while every listing it used holds (held-walk.ts). */
  const walks = walkHold();
  /** What the last discover() listed, and the discovery and compaction sources it was made of. */
  let listedLast: { found: unknown; compactions: readonly Source[]; sources: Source[] } | undefined;
  /** Real hints for sources of a quiet discovery, built only if one is ever collected. */
  let built: Promise<ReadonlyMap<string, Source>> | undefined;
  /** One pass: the memos its quiet discovery loaded, for the hints built from them (not loaded twice). */
  let quietMemos: DiscoveryMemos | undefined;
  const buildHints = (): Promise<ReadonlyMap<string, Source>> => {
    const memos = quietMemos ?? memosNow();
    return discoverCline(paths, readIndex, memos.sidecars, undefined, memos.dirs).then(
      (d) => new Map(d.sources.map((s) => [s.path, s])),
    );
  };
  const withHint = async (source: Source): Promise<Source> => {
    built ??= buildHints();
    const full = (await built).get(source.after ?? source.path);
    return { ...source, origin: full?.origin ?? source.origin, hint: full?.hint ?? {} };
  };
  return {
    id: CLINE_ADAPTER_ID,
    // Documents first, then the compaction files next to them: a compaction's model comes from
    // its document's events, which the pass has committed by then.
    async discover(known) {
      verified = undefined;
      built = undefined;
      const memos = memosNow();
      quietMemos = undefined;
      const problems: Problem[] = [];
      // The snapshot first (quiet-tree.ts): a tree proved unchanged lists no source at all.
      let snapshotStored = false;
      if (known !== undefined && listings !== undefined) {
        const held = quietTreeHolds(
          listings,
          sessionsDir,
          paths.db.path,
          () => known.token(CLINE_ADAPTER_ID),
          now,
        );
        if (held.tree !== undefined) {
          return { sources: [], problems: [...held.tree.problems], unchangedUnlisted: held.tree.unchanged };
        }
        snapshotStored = held.stored;
      }
      const listed = new Set<string>();
      const walkProblems: Problem[] = [];
      const facts = known !== undefined && listings !== undefined ? walkFacts() : undefined;
      const docs = walkSessions(
        sessionsDir,
        walkProblems,
        listed,
        memos.dirs,
        facts,
        keep ? walks : undefined,
      );
      const walk = { docs, problems: walkProblems };
      // Gate first: with the checkpoints and a walk that re-listed nothing, an unchanged tree
      // builds no source's hint and decodes no index (quiet.ts).
      const calm =
        known !== undefined && quiet !== undefined && walkProblems.length === 0 && memos.dirs.pending() === 0;
      const docStats: number[] | undefined = facts === undefined ? undefined : [];
      const q = calm
        ? quietSources(quiet, sessionsDir, paths.db.path, docs, () => known.all(), now, docStats)
        : undefined;
      let found: { readonly sources: Source[]; readonly problems: readonly Problem[] };
      let snapshot: string | undefined;
      if (q !== undefined) {
        if (!keep) quietMemos = memos;
        verified = docs.length === 0 ? undefined : known?.all();
        found = q;
        // Only now, from what this quiet discovery matched: the checkpoints it loaded (committed
        // before this pass) and their token, read before anything of this pass is committed.
        const some = docs.length > 0 && listed.size === 0;
        if (some && facts !== undefined && docStats !== undefined && known !== undefined) {
          snapshot = encodeQuietTree(sessionsDir, facts, docs, docStats, {
            indexMark: q.indexMark,
            problems: q.problems,
            token: known.token(CLINE_ADAPTER_ID),
          });
        }
      } else {
        const marks = quiet === undefined ? undefined : indexMarks(paths.db.path, now);
        const full = await discoverCline(
          paths,
          readIndex,
          memos.sidecars,
          listed,
          memos.dirs,
          walk,
          keep ? hold : undefined,
        );
        found = full;
        if (quiet !== undefined && marks !== undefined) {
          const own = full.problems.filter((p) => !walkProblems.includes(p));
          keepQuietEntry(quiet, sessionsDir, quietEntry(marks, full.index, docs, own));
        }
      }
      problems.push(...found.problems);
      // The quiet facts before the listings: should the second write fail, the listings not
      // written make the next walk list again, which takes the full discovery.
      try {
        quiet?.flush();
      } catch (e) {
        problems.push({ path: sessionsDir, code: "listings-not-saved", detail: (e as Error).message });
      }
      flushDiscoveryMemos(memos, problems, sessionsDir);
      // The snapshot last, and only a true one: a stale one is dropped (were that to fail, its
      // stats or token no longer match anyway).
      if (listings !== undefined && (snapshot !== undefined || snapshotStored)) {
        try {
          const put =
            snapshot === undefined
              ? new Map()
              : new Map([[sessionsDir, { mark: "", takenMs: now(), entries: snapshot }]]);
          listings.save(QUIET_TREE_SCOPE, put, snapshot === undefined ? [sessionsDir] : []);
        } catch (e) {
          problems.push({ path: sessionsDir, code: "listings-not-saved", detail: (e as Error).message });
        }
      }
      // The same results either way, only slower: said once, counted like any problem.
      const fallback = reader.takeDisabledNotice();
      if (fallback !== undefined)
        problems.push({
          path: sessionsDir,
          code: "reader-fallback",
          detail: `${fallback}; documents are read on the main thread`,
        });
      // A quiet discovery's documents are all `<sessions>/<folder>/<file>`: only a listed
      // compaction file can be one's (compactionSources), and with none there is nothing to look at.
      const compactions =
        q !== undefined && listed.size === 0 ? [] : compactionSources(found.sources, listed, sessionsDir);
      // A held discovery with the same compaction files lists the very same array (the loop's
      // checks then answer by identity).
      const last = listedLast;
      const sources =
        last !== undefined && last.found === found && sameCompactions(last.compactions, compactions)
          ? last.sources
          : [...found.sources, ...compactions];
      if (keep) listedLast = { found, compactions, sources };
      return { sources, problems };
    },
    async collectIncremental(source, checkpoint) {
      const s = source.hint === UNBUILT_HINT ? await withHint(source) : source;
      if (s.adapterId === CLINE_COMPACTIONS_ADAPTER_ID) return collectCompactionIncremental(s, checkpoint);
      return reader.collect(s, checkpoint);
    },
    // Documents and compaction files alike: the stat gate of collectIfChanged. A quiet
    // discovery's document was stat-ed by it against this very checkpoint: that stat answers.
    unchangedNow: (source, checkpoint) =>
      (source.hint === UNBUILT_HINT &&
        source.adapterId === CLINE_ADAPTER_ID &&
        verified?.get(source.path) === checkpoint) ||
      unchangedNow(source.path, checkpoint),
  };
}
