import { unchangedNow } from "../fingerprint.ts";
import type { ListingStore } from "../listings.ts";
import type { Adapter } from "../types.ts";
import { BackgroundReader } from "./background-reader.ts";
import {
  CLINE_COMPACTIONS_ADAPTER_ID,
  collectCompactionIncremental,
  compactionSources,
} from "./compaction/collect.ts";
import { discoverCline, discoveryMemos, flushDiscoveryMemos } from "./discover.ts";
import { cachedIndexReader, type IndexReader } from "./index-db.ts";
import type { ClinePaths } from "./paths.ts";
import { CLINE_ADAPTER_ID } from "./types.ts";

export { collectDocument } from "./document.ts";

/**
 * `readIndex`: share one with the captures surface so the index is read once per change.
 * `listings`: where discovery's listings persist (the ledger's), so a new process stats the
 * session folders instead of listing them; without it they last as long as the adapter.
 */
export function createClineAdapter(
  paths: ClinePaths,
  readIndex: IndexReader = cachedIndexReader(),
  listings?: ListingStore,
): Adapter {
  const memos = discoveryMemos(listings);
  // Documents are read in a worker thread while a backfill reads far ahead (background-reader.ts).
  const reader = new BackgroundReader();
  return {
    id: CLINE_ADAPTER_ID,
    // Documents first, then the compaction files next to them: a compaction's model comes from
    // its document's events, which the pass has committed by then.
    async discover() {
      const listed = new Set<string>();
      const found = await discoverCline(paths, readIndex, memos.sidecars, listed, memos.dirs);
      const problems = [...found.problems];
      flushDiscoveryMemos(memos, problems, paths.sessions.path);
      // The same results either way, only slower: said once, counted like any problem.
      const fallback = reader.takeDisabledNotice();
      if (fallback !== undefined)
        problems.push({
          path: paths.sessions.path,
          code: "reader-fallback",
          detail: `${fallback}; documents are read on the main thread`,
        });
      return {
        sources: [...found.sources, ...compactionSources(found.sources, listed, paths.sessions.path)],
        problems,
      };
    },
    async collectIncremental(source, checkpoint) {
      if (source.adapterId === CLINE_COMPACTIONS_ADAPTER_ID)
        return collectCompactionIncremental(source, checkpoint);
      return reader.collect(source, checkpoint);
    },
    // Documents and compaction files alike: the stat gate of collectIfChanged.
    unchangedNow: (source, checkpoint) => unchangedNow(source.path, checkpoint),
  };
}
