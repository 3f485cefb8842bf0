import { type Dirent, readdirSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import type { DiscoverResult, Problem, SessionHint, Source } from "../types.ts";
import { isCompactionFile, isUsageSource } from "./compaction/files.ts";
import { cachedIndexReader, type IndexReadResult, type IndexRow, readSessionIndex } from "./index-db.ts";
import { identityFromPath } from "./parser.ts";
import type { ClinePaths } from "./paths.ts";
import { readSidecarCwd, type SidecarCache } from "./sidecar.ts";
import { CLINE_ADAPTER_ID } from "./types.ts";

/** The index names a document; resolve it against the sessions dir when stored relative. */
export function indexDocumentPath(row: IndexRow, sessionsDir: string): string | undefined {
  const p = row.messagesPath;
  if (p === null || p === "") return undefined;
  return isAbsolute(p) ? resolve(p) : resolve(sessionsDir, p);
}

/**
 * Where an index row's document really is: `messages_path` as stored, or, when that is
 * gone (a data dir moved, restored from backup, mounted into a container), the same
 * `<root>/<file>` under the sessions dir we were given.
 */
export function locateIndexedDocument(
  row: IndexRow,
  sessionsDir: string,
  walked: (path: string) => boolean = () => false,
): string | undefined {
  const stored = indexDocumentPath(row, sessionsDir);
  if (stored === undefined || !isUsageSource(stored)) return undefined;
  // A document the walk already saw needs no stat of its own.
  if (walked(stored) || regularFile(stored)) return stored;
  const rebased = join(sessionsDir, basename(dirname(stored)), basename(stored));
  return walked(rebased) || regularFile(rebased) ? rebased : undefined;
}

function regularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    // A missing or unreadable file is simply not a document; the caller counts it.
    return false;
  }
}

function canonical(path: string): string {
  try {
    // The native realpath is several times faster than the JS one on a walk of thousands.
    return realpathSync.native(path);
  } catch {
    // Vanished or unreadable: it keeps its own name here, and collecting it reports the error.
    return resolve(path);
  }
}

/**
 * Walk `<sessions>/<root>/*.messages.json`: Cline's layout is exactly two levels deep,
 * so the walk never descends further, which also makes symlink loops harmless.
 */
export function walkSessions(
  sessionsDir: string,
  problems: Problem[],
  /** Filled with the `*.compaction.json` files the same listing saw (no extra I/O). */
  compactionFiles?: Set<string>,
): WalkedDocument[] {
  const found: WalkedDocument[] = [];
  let roots: Dirent[];
  try {
    roots = readdirSync(sessionsDir, { withFileTypes: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ENOENT") problems.push({ path: sessionsDir, code: "unreadable-dir", detail: String(code) });
    return found;
  }
  for (const root of roots) {
    const dir = join(sessionsDir, root.name);
    if (!root.isDirectory() && !(root.isSymbolicLink() && isDir(dir))) continue;
    let files: Dirent[];
    try {
      files = readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      problems.push({ path: dir, code: "unreadable-dir", detail: String((e as NodeJS.ErrnoException).code) });
      continue;
    }
    for (const f of files) {
      if (compactionFiles !== undefined && isCompactionFile(f.name) && f.isFile()) {
        compactionFiles.add(join(dir, f.name));
      }
      if (!isUsageSource(f.name)) continue;
      const p = join(dir, f.name);
      if (f.isFile()) found.push({ path: p, plain: root.isDirectory() });
      else if (f.isSymbolicLink() && regularFile(p)) found.push({ path: p, plain: false });
    }
  }
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** A walked document; `plain` when neither its session folder nor the file is a symlink. */
export interface WalkedDocument {
  readonly path: string;
  readonly plain: boolean;
}

/**
 * Identity of a document for de-duplicating index and walk. A path under the sessions dir
 * with no symlink below it needs no realpath per document: the sessions dir is resolved
 * once. (A document reached two ways that this misses is read twice, never counted twice:
 * the dedup keys collapse it.)
 */
export function canonicalizer(sessionsDir: string): (path: string, plain: boolean) => string {
  const base = resolve(sessionsDir);
  const real = canonical(base);
  return (path, plain) =>
    plain && path.startsWith(`${base}/`) ? real + path.slice(base.length) : canonical(path);
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    // A dangling symlink in the sessions dir is not a session folder (Cline never makes one).
    return false;
  }
}

/**
 * Discovery: first every document the index names (with its cwd as project), then
 * every document under the sessions tree the index did not name. A missing, locked or
 * corrupt index costs metadata, never events.
 */
export async function discoverCline(
  paths: ClinePaths,
  readIndex: (dbDir: string) => IndexReadResult | Promise<IndexReadResult> = readSessionIndex,
  sidecars: SidecarCache = new Map(),
  /** Filled with the compaction files the walk listed (the compaction surface's sources). */
  compactionFiles?: Set<string>,
): Promise<DiscoverResult> {
  const problems: Problem[] = [];
  const sources: Source[] = [];
  const sessionsDir = paths.sessions.path;
  const index = await readIndex(paths.db.path);
  if (index.status !== "ok" && index.status !== "missing") {
    problems.push({
      path: index.dbPath,
      code: `index-${index.status}`,
      detail: index.problem ?? index.status,
    });
  }
  const byId = new Map<string, IndexRow>();
  for (const r of index.rows) byId.set(r.sessionId, r);
  const rootOf = (r: IndexRow): string => r.parentSessionId ?? r.sessionId.split("__")[0] ?? r.sessionId;

  const seen = new Set<string>();
  const identity = canonicalizer(sessionsDir);
  const walkedDocs = walkSessions(sessionsDir, problems, compactionFiles);
  const walkedPlain = new Set(walkedDocs.filter((d) => d.plain).map((d) => d.path));
  for (const row of index.rows) {
    const p = locateIndexedDocument(row, sessionsDir, (path) => walkedPlain.has(path));
    if (p === undefined) {
      if (row.messagesPath !== null && row.messagesPath !== "") {
        problems.push({
          path: row.messagesPath,
          code: "index-path-unusable",
          detail: `session ${row.sessionId}: messages_path is not a readable *.messages.json file (the sessions walk still looks for it)`,
        });
      }
      continue;
    }
    const real = identity(p, true);
    if (seen.has(real)) continue;
    seen.add(real);
    const root = byId.get(rootOf(row));
    const hint: SessionHint = {
      sessionId: row.sessionId,
      rootSessionId: rootOf(row),
      project: row.cwd ?? root?.cwd ?? undefined,
    };
    sources.push({ adapterId: CLINE_ADAPTER_ID, path: p, origin: "index", hint });
  }

  const cwdCache = new Map<string, string | undefined>();
  for (const { path: p, plain } of walkedDocs) {
    const real = identity(p, plain);
    if (seen.has(real)) continue;
    seen.add(real);
    const id = identityFromPath(p);
    const dir = join(sessionsDir, basename(join(p, "..")));
    let project = byId.get(id.rootSessionId)?.cwd ?? undefined;
    if (project === undefined) {
      if (!cwdCache.has(id.rootSessionId)) {
        cwdCache.set(id.rootSessionId, await readSidecarCwd(dir, id.rootSessionId, problems, sidecars));
      }
      project = cwdCache.get(id.rootSessionId);
    }
    const hint: SessionHint = {
      rootSessionId: id.rootSessionId,
      ...(project !== undefined ? { project } : {}),
    };
    sources.push({ adapterId: CLINE_ADAPTER_ID, path: p, origin: "walk", hint });
  }
  return { sources, problems };
}

/** One copy of the cached index reader, in index-db.ts (kept importable from here). */
export { cachedIndexReader };
