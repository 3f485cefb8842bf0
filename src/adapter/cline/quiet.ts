/**
 * The quiet discovery of Cline's sessions (issue 30, "gate first, build later"): when a pass hands
 * discovery its checkpoints and nothing changed, the sources are found by the walk and the gate's
 * stat alone, and nothing else is built: no index decoded, no hint, no sidecar looked at.
 *
 * What it relies on, remembered across processes in the listings store (scope QUIET_SCOPE, one
 * entry per sessions dir): the facts of the last full discovery that are the index's alone, kept
 * with the marks of `sessions.db` and its WAL (index-cache.ts's `fileMark`, the same confirmation
 * rule). A full discovery whose index rows each name a document as `<sessions>/<folder>/<file>`
 * (or none) finds exactly the walked documents, so while the index keeps its marks, a walk whose
 * every listing held, whose every document is plain, has a checkpoint and is unchanged by its
 * stat finds the same sources as that full discovery, and the same problems (kept verbatim).
 * Anything else (a new, grown, rewritten, renamed or deleted document, a re-listed folder, an
 * index changed, a symlink, a problem that may pass) takes the full discovery, which writes the
 * entry again. The quiet sources carry UNBUILT_HINT; the adapter builds a real hint for one only
 * if it is ever collected (cline/adapter.ts), and answers their gate from the stat taken here.
 */
import { join } from "node:path";
import { unchangedSinceStat } from "../fingerprint.ts";
import { LISTING_CONFIRM_MS, type ListingMemo } from "../listings.ts";
import { statNow } from "../stat-now.ts";
import type { Problem, SessionHint, Source, SourceCheckpoint } from "../types.ts";
import { fileMark } from "./index-cache.ts";
import { SESSIONS_DB } from "./index-db.ts";
import { CLINE_ADAPTER_ID, type IndexFacts, type WalkedDocument } from "./types.ts";

/** Listing scope of the quiet facts: one entry per sessions dir. */
export const QUIET_SCOPE = "cline.quiet";

/** The hint of a source no one built a hint for (a quiet discovery's): compared by identity. */
export const UNBUILT_HINT: SessionHint = Object.freeze({});

/**
 * Problems a full discovery reports again, unchanged, while the index and the walk are the same:
 * the quiet discovery repeats them. Any other (a sidecar that could not be read, an index read
 * that failed or was not remembered) may pass by itself: no entry is written while one is seen.
 */
const STABLE = new Set([
  "index-missing",
  "index-rows-skipped",
  "index-path-unusable",
  "unknown-session-source",
]);

/** The marks of `sessions.db` and its WAL now, and whether they are confirmed (see index-cache.ts). */
export interface IndexMarks {
  readonly mark: string;
  readonly takenMs: number;
  readonly changedMs: number;
}

export function indexMarks(dbDir: string, now: () => number): IndexMarks {
  const dbPath = join(dbDir, SESSIONS_DB);
  // Taken before the stats: a change after them is stamped later than this.
  const takenMs = now();
  const db = fileMark(dbPath);
  const wal = fileMark(`${dbPath}-wal`);
  return { mark: `${db.mark}|${wal.mark}`, takenMs, changedMs: Math.max(db.changedMs, wal.changedMs) };
}

/**
 * After a full discovery: the entry to keep for `sessionsDir` (undefined: none may be kept).
 * `index`: the facts of its index read (indexFacts); `walked`: its walk's documents; `problems`:
 * everything it reported but the walk's own.
 */
export function quietEntry(
  marks: IndexMarks,
  index: IndexFacts,
  walked: readonly WalkedDocument[],
  problems: readonly Problem[],
): { readonly mark: string; readonly takenMs: number; readonly entries: string } | undefined {
  if (marks.takenMs - marks.changedMs < LISTING_CONFIRM_MS) return undefined;
  if (!(index.status === "ok" || index.status === "missing") || index.cacheProblem !== undefined)
    return undefined;
  if (!problems.every((p) => STABLE.has(p.code))) return undefined;
  if (!index.rowsWalkShaped) return undefined;
  if (!walked.every((d) => d.plain)) return undefined;
  return { mark: marks.mark, takenMs: marks.takenMs, entries: JSON.stringify(problems) };
}

/** Stores (or drops) the entry for `sessionsDir`, writing only when it differs from the stored one. */
export function keepQuietEntry(
  memo: ListingMemo,
  sessionsDir: string,
  entry: ReturnType<typeof quietEntry>,
): void {
  if (entry === undefined) {
    memo.drop(sessionsDir);
    return;
  }
  const stored = memo.get(sessionsDir);
  if (stored !== undefined && stored.mark === entry.mark && stored.entries === entry.entries) return;
  memo.put(sessionsDir, entry);
}

/** The problems a stored entry lists, or undefined when it is damaged (quiet.ts's and quiet-tree.ts's). */
export function storedProblems(entries: string): Problem[] | undefined {
  let v: unknown;
  try {
    v = JSON.parse(entries);
  } catch (e) {
    // A damaged entry is no entry: a fuller discovery runs and writes it again.
    if (e instanceof SyntaxError) return undefined;
    throw e;
  }
  if (!Array.isArray(v)) return undefined;
  const ok = v.every(
    (p) =>
      typeof p === "object" &&
      p !== null &&
      typeof p.path === "string" &&
      typeof p.code === "string" &&
      typeof p.detail === "string",
  );
  return ok ? (v as Problem[]) : undefined;
}

/**
 * The quiet discovery: the sources and problems when nothing changed since the stored entry, or
 * undefined (take the full discovery). `walked` is this pass's walk, which re-listed nothing
 * (the caller checks); each document is stat-ed here, the stat that answers its gate.
 */
export function quietSources(
  memo: ListingMemo,
  sessionsDir: string,
  dbDir: string,
  walked: readonly WalkedDocument[],
  /** The checkpoints, asked for only when the walk found a document. */
  checkpoints: () => ReadonlyMap<string, SourceCheckpoint>,
  now: () => number,
  /** Filled with each document's size, ino and mtimeMs as stat-ed here (quiet-tree.ts). */
  docStats?: number[],
): { readonly sources: Source[]; readonly problems: Problem[]; readonly indexMark: string } | undefined {
  const stored = memo.get(sessionsDir);
  if (stored === undefined || stored.mark !== indexMarks(dbDir, now).mark) return undefined;
  const problems = storedProblems(stored.entries);
  if (problems === undefined) return undefined;
  const sources: Source[] = [];
  const known = walked.length === 0 ? new Map<string, SourceCheckpoint>() : checkpoints();
  for (const d of walked) {
    const cp = known.get(d.path);
    if (cp === undefined || !d.plain) return undefined;
    // Unreadable now (undefined): the full discovery and the gate meet it again and report it.
    const s = statNow(d.path);
    if (s === undefined || !unchangedSinceStat(cp, s)) return undefined;
    docStats?.push(s.size, s.ino, s.mtimeMs);
    sources.push({ adapterId: CLINE_ADAPTER_ID, path: d.path, origin: "walk", hint: UNBUILT_HINT });
  }
  return { sources, problems, indexMark: stored.mark };
}
