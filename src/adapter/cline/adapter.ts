import { ScanError, scanFile } from "../../scan/scanner.ts";
import { checkpointOf, collectIfChanged, readWhole } from "../fingerprint.ts";
import type { ListingStore } from "../listings.ts";
import type { Adapter, Observation, Source } from "../types.ts";
import {
  CLINE_COMPACTIONS_ADAPTER_ID,
  collectCompactionIncremental,
  compactionSources,
} from "./compaction/collect.ts";
import { isUsageSource } from "./compaction/files.ts";
import { discoverCline, discoveryMemos, flushDiscoveryMemos } from "./discover.ts";
import { cachedIndexReader, type IndexReader } from "./index-db.ts";
import { parseMessagesDocument } from "./parser.ts";
import type { ClinePaths } from "./paths.ts";
import { messagesDocumentSchema } from "./schema.ts";
import { CLINE_ADAPTER_ID } from "./types.ts";

function failed(source: Source, code: string, detail: string): Observation {
  return { status: "failed", source, problem: { path: source.path, code, detail } };
}

/** Read one document in full. Torn, vanished or unreadable documents fail (retried next pass). */
export async function collectDocument(source: Source): Promise<Observation> {
  // Defence in depth behind discovery: a compaction file (or anything else) is never parsed for usage.
  if (!isUsageSource(source.path)) {
    return failed(source, "not-a-usage-source", "only *.messages.json documents carry usage events");
  }
  let result: Awaited<ReturnType<typeof scanFile<typeof messagesDocumentSchema>>>;
  try {
    result = await scanFile(source.path, messagesDocumentSchema);
  } catch (e) {
    if (e instanceof ScanError) {
      const code =
        e.code === "truncated" || e.code === "syntax" || e.code === "empty"
          ? "partial-document"
          : e.code === "io" && /ENOENT/.test(e.message)
            ? "vanished"
            : e.code === "io"
              ? "unreadable"
              : e.code;
      return failed(source, code, e.message);
    }
    throw e;
  }
  // Cline writes in place (truncate + write): a read that raced a rewrite is retried.
  if (!readWhole(result)) {
    return failed(source, "changed-during-read", "the document was rewritten while being read");
  }
  const parsed = parseMessagesDocument(result.value, source.path, source.hint);
  return {
    status: "read",
    source,
    checkpoint: checkpointOf(source.path, result.statBefore),
    events: parsed.events,
    toolCalls: parsed.toolCalls,
    problems: parsed.problems,
    signals: parsed.signals,
  };
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
): Adapter {
  const memos = discoveryMemos(listings);
  return {
    id: CLINE_ADAPTER_ID,
    // Documents first, then the compaction files next to them: a compaction's model comes from
    // its document's events, which the pass has committed by then.
    async discover() {
      const listed = new Set<string>();
      const found = await discoverCline(paths, readIndex, memos.sidecars, listed, memos.dirs);
      const problems = [...found.problems];
      flushDiscoveryMemos(memos, problems, paths.sessions.path);
      return {
        sources: [...found.sources, ...compactionSources(found.sources, listed, paths.sessions.path)],
        problems,
      };
    },
    async collectIncremental(source, checkpoint) {
      if (source.adapterId === CLINE_COMPACTIONS_ADAPTER_ID)
        return collectCompactionIncremental(source, checkpoint);
      return collectIfChanged(source, checkpoint, collectDocument);
    },
  };
}
