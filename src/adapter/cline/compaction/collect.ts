/**
 * The compaction surface of the Cline adapter: one source per `<stem>.compaction.json` that sits
 * next to a discovered messages document, read through the allow-list (schema.ts) whenever its
 * size, mtime or inode changed, and committed with its own checkpoint. It carries no usage: its
 * one product is a `Compaction` (numbers and enums) for the `cline.compactions` counter.
 */
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ScanError, scanFile } from "../../../scan/scanner.ts";
import { checkpointOf, collectIfChanged, readWhole } from "../../fingerprint.ts";
import type { Compaction, Observation, Problem, Source, SourceCheckpoint } from "../../types.ts";
import { compactionPathFor, messagesPathFor } from "./files.ts";
import { parseCompactionDocument } from "./parser.ts";
import { compactionDocumentSchema } from "./schema.ts";

/** Adapter id of the compaction surface: the adapter column of its checkpoints. */
export const CLINE_COMPACTIONS_ADAPTER_ID = "cline-compaction";

/**
 * The compaction sources of a discovery: for each messages document, its sibling compaction file
 * when the walk listed it (`listed`, no extra I/O), or, for a document outside the walked
 * sessions dir (an index path elsewhere, rare), when it exists. The document's hint travels.
 */
export function compactionSources(
  documents: readonly Source[],
  listed: ReadonlySet<string>,
  sessionsDir: string,
  exists: (path: string) => boolean = existsSync,
): Source[] {
  const out: Source[] = [];
  const seen = new Set<string>();
  const walked = resolve(sessionsDir);
  // The listed files by their document: one lookup per document, no path arithmetic for the
  // thousands of documents that have none (path functions cost ~µs each: 10,000 sessions add up).
  const byDocument = new Map<string, string>();
  for (const c of listed) byDocument.set(messagesPathFor(c), c);
  const under = `${walked}/`;
  for (const d of documents) {
    let path = byDocument.get(d.path);
    if (path === undefined) {
      // `<sessions>/<folder>/<file>` as the walk writes it: that folder's listing already answered
      // (no stat). Anything else is resolved first, as it may still be in a walked folder.
      const slash = d.path.indexOf("/", under.length);
      const folder = d.path.slice(under.length, slash);
      const plain = folder !== "" && folder !== "." && folder !== "..";
      if (d.path.startsWith(under) && slash > 0 && plain && slash === d.path.lastIndexOf("/")) continue;
      path = compactionPathFor(d.path);
      const outside = dirname(dirname(resolve(d.path))) !== walked;
      if (!listed.has(path) && !(outside && exists(path))) continue;
    }
    if (seen.has(path)) continue;
    seen.add(path);
    // After its document: a document being rewritten when it is read fails for this pass, and
    // its compaction must wait for it (its model is that document's).
    out.push({
      adapterId: CLINE_COMPACTIONS_ADAPTER_ID,
      path,
      origin: d.origin,
      hint: d.hint,
      after: d.path,
    });
  }
  return out;
}

function failed(source: Source, code: string, detail: string): Observation {
  return { status: "failed", source, problem: { path: source.path, code, detail } };
}

function read(
  source: Source,
  checkpoint: SourceCheckpoint,
  compactions: Compaction[],
  problems: Problem[] = [],
): Observation {
  return {
    status: "read" as const,
    source,
    checkpoint,
    events: [],
    toolCalls: [],
    compactions,
    problems,
  };
}

/** Reads one compaction file: its allow-listed numbers and enums, nothing else. */
export async function collectCompaction(source: Source): Promise<Observation> {
  let result: Awaited<ReturnType<typeof scanFile<typeof compactionDocumentSchema>>>;
  try {
    result = await scanFile(source.path, compactionDocumentSchema);
  } catch (e) {
    if (!(e instanceof ScanError)) throw e;
    if (e.code === "io" && /ENOENT/.test(e.message)) {
      return failed(source, "vanished", "the compaction file is gone (the session was deleted)");
    }
    // Cline writes it with tmp + rename, so a malformed file is not a torn write: retried anyway
    // (it is small), and reported each pass until it parses.
    return failed(source, e.code === "io" ? "unreadable" : "invalid-compaction", e.message);
  }
  if (!readWhole(result)) {
    return failed(source, "changed-during-read", "the compaction file was replaced while being read");
  }
  const checkpoint = checkpointOf(source.path, result.statBefore);
  const parsed = parseCompactionDocument(result.value, source.path);
  if ("problem" in parsed) return read(source, checkpoint, [], [parsed.problem]);
  if ("none" in parsed) return read(source, checkpoint, []);
  return read(source, checkpoint, [{ ...parsed.ok, project: source.hint.project ?? "" }]);
}

/** The incremental read: an unchanged file (size, mtime, inode) is not opened. */
export function collectCompactionIncremental(
  source: Source,
  checkpoint: SourceCheckpoint | undefined,
): Promise<Observation> {
  return collectIfChanged(source, checkpoint, collectCompaction);
}
