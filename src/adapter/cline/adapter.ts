import { statSync } from "node:fs";
import { type FileStat, ScanError, scanFile } from "../../scan/scanner.ts";
import type { Adapter, Observation, Source, SourceCheckpoint } from "../types.ts";
import { cachedIndexReader, discoverCline, type SidecarCache } from "./discover.ts";
import { parseMessagesDocument } from "./parser.ts";
import type { ClinePaths } from "./paths.ts";
import { messagesDocumentSchema } from "./schema.ts";
import { CLINE_ADAPTER_ID } from "./types.ts";

export function checkpointOf(path: string, s: FileStat): SourceCheckpoint {
  return { path, size: s.size, mtimeNs: s.mtimeNs.toString(), ino: s.ino, dev: s.dev };
}

/**
 * The gate: a document whose size, mtime and inode match its checkpoint is not opened.
 * There is no tail read to be had, since Cline rewrites the whole JSON in place on
 * every save; any change means a full re-parse, collapsed by the persisted ids.
 */
export function unchangedSince(cp: SourceCheckpoint | undefined, s: FileStat): boolean {
  return cp !== undefined && cp.size === s.size && cp.mtimeNs === s.mtimeNs.toString() && cp.ino === s.ino;
}

function statFile(path: string): FileStat {
  const s = statSync(path, { bigint: true });
  return { size: Number(s.size), mtimeNs: s.mtimeNs, ino: Number(s.ino), dev: Number(s.dev) };
}

function sameStat(a: FileStat, b: FileStat): boolean {
  return a.size === b.size && a.mtimeNs === b.mtimeNs && a.ino === b.ino;
}

function failed(source: Source, code: string, detail: string): Observation {
  return { status: "failed", source, problem: { path: source.path, code, detail } };
}

/** Read one document in full. Torn, vanished or unreadable documents fail (retried next pass). */
export async function collectDocument(source: Source): Promise<Observation> {
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
  if (!sameStat(result.statBefore, result.statAfter) || result.bytesRead !== result.statAfter.size) {
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
  };
}

export function createClineAdapter(paths: ClinePaths): Adapter {
  const readIndex = cachedIndexReader();
  const sidecars: SidecarCache = new Map();
  return {
    id: CLINE_ADAPTER_ID,
    displayName: "Cline CLI",
    capabilities: () => ({ cost: "computed", activity: "exact-join" }),
    discover: () => discoverCline(paths, readIndex, sidecars),
    collect: collectDocument,
    async collectIncremental(source, checkpoint) {
      let s: FileStat;
      try {
        s = statFile(source.path);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        return failed(source, code === "ENOENT" ? "vanished" : "unreadable", `stat failed: ${code}`);
      }
      if (checkpoint !== undefined && unchangedSince(checkpoint, s)) {
        return { status: "unchanged", source, checkpoint };
      }
      return collectDocument(source);
    },
  };
}
