import { type Dirent, readdirSync, realpathSync, type Stats, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { dirPrefix } from "../../util/dir-prefix.ts";
import { flatConcat } from "../../util/flat.ts";
import {
  dirMark,
  type ListingMemo,
  type ListingStore,
  listingHolds,
  listingMemo,
  type StoredListing,
} from "../listings.ts";
import type { Problem, SessionHint, Source } from "../types.ts";
import { clientNamer } from "./client.ts";
import { isCompactionFile, isUsageSource } from "./compaction/files.ts";
import { type DiscoveryHold, heldDiscovery } from "./held-discovery.ts";
import { heldWalk, type WalkHold } from "./held-walk.ts";
import {
  cachedIndexReader,
  type IndexReadResult,
  type IndexRow,
  indexKey,
  readSessionIndex,
} from "./index-db.ts";
import { indexFacts } from "./index-facts.ts";
import type { ClinePaths } from "./paths.ts";
import { persistedSidecars, readSidecar, type SidecarCache, type SidecarFacts } from "./sidecar.ts";
import { CLINE_ADAPTER_ID, type ClineDiscovery, type WalkedDocument } from "./types.ts";

// Where they were first defined; in types.ts so that held-walk.ts and held-discovery.ts need not import this file.
export type { ClineDiscovery, WalkedDocument };

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
  // The common case, answered without normalizing: the stored path is one the walk listed (walked
  // paths are absolute, normalized, and documents).
  if (row.messagesPath !== null && walked(row.messagesPath)) return row.messagesPath;
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

/** Listing scopes of the Cline adapter (src/adapter/listings.ts): session dirs, and sidecar cwds. */
export const SESSION_DIRS_SCOPE = "cline.session-dirs";
export const SIDECAR_CWDS_SCOPE = "cline.sidecar-cwds";

/**
 * What the walk keeps of a listing, one `<kind><name>` per entry joined by "/" (the one byte no
 * file name holds). The sessions dir: `d` session folder, `l` symlink (to a folder, checked when
 * used). A session folder: `f` document, `l` symlinked document, `c` compaction file; the rest
 * of a folder (sidecar, captures, ...) is not kept: nothing here reads it from a listing.
 */
function keepRoot(d: Dirent): string | undefined {
  return d.isDirectory() ? `d${d.name}` : d.isSymbolicLink() ? `l${d.name}` : undefined;
}

function keepSession(f: Dirent): string | undefined {
  if (isUsageSource(f.name)) return f.isFile() ? `f${f.name}` : f.isSymbolicLink() ? `l${f.name}` : undefined;
  return isCompactionFile(f.name) && f.isFile() ? `c${f.name}` : undefined;
}

const C = "c".charCodeAt(0);
const F = "f".charCodeAt(0);
const L = "l".charCodeAt(0);
const entriesOf = (encoded: string): string[] => (encoded === "" ? [] : encoded.split("/"));

/**
 * The kept entries of directory `dir` whose stat is `s`: the stored listing when it still holds
 * (one stat, already paid, instead of a readdir), else a fresh readdir, stored. Throws readdir's
 * error. `takenMs` is read before the stat (see StoredListing.takenMs). `fresh` tells the caller.
 */
function listDir(
  dir: string,
  s: Stats,
  memo: ListingMemo,
  takenMs: number,
  keep: (d: Dirent) => string | undefined,
): { readonly entries: string[]; readonly fresh: boolean } {
  const stored = memo.get(dir);
  if (listingHolds(stored, s)) return { entries: entriesOf(stored.entries), fresh: false };
  const entries: string[] = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const k = keep(d);
    if (k !== undefined) entries.push(k);
  }
  sortedListing(entries, keep === keepRoot);
  memo.put(dir, { mark: dirMark(s), takenMs, entries: entries.join("/") });
  return { entries, fresh: true };
}

/**
 * Sorts kept entries by name, the kind letter aside; folder names as path components (name + "/"):
 * a walk that visits folders, then their files, in that order yields documents in plain path
 * order, since no name holds a "/" (so "a-b/x" comes before "a/x", as the paths compare).
 */
function sortedListing(entries: string[], folders: boolean): void {
  const key = folders ? (e: string) => `${e.slice(1)}/` : (e: string) => e.slice(1);
  entries.sort((a, b) => {
    const x = key(a);
    const y = key(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

const errCode = (e: unknown): string => String((e as NodeJS.ErrnoException).code);
const MUST_EXIST = { throwIfNoEntry: true } as const;
const MAY_BE_GONE = { throwIfNoEntry: false } as const;

/**
 * Walk `<sessions>/<root>/*.messages.json`: Cline's layout is exactly two levels deep,
 * so the walk never descends further, which also makes symlink loops harmless. With a memo
 * that persists (the ledger's listings), an unchanged folder costs a stat instead of a readdir:
 * the walk stats every folder (its mark), and lists only those whose mark changed, or whose last
 * listing was too close to their last change to be trusted. Documents are not stat-ed here (an
 * in-place rewrite leaves the folder unchanged; the collector's stat of each document answers).
 */
export function walkSessions(
  sessionsDir: string,
  problems: Problem[],
  /** Filled with the `*.compaction.json` files the same listing saw (no extra I/O). */
  compactionFiles?: Set<string>,
  memo: ListingMemo = listingMemo(SESSION_DIRS_SCOPE, undefined),
  /** Filled with the stat numbers of the sessions dir and each folder walked (quiet-tree.ts). */
  facts?: WalkFacts,
  /** The last walk, handed on while every listing it used still holds (held-walk.ts; not with `facts`). */
  hold?: WalkHold,
): WalkedDocument[] {
  const found: WalkedDocument[] = [];
  const takenMs = memo.now();
  let roots: { readonly entries: string[]; readonly fresh: boolean };
  const last = hold?.last;
  if (hold !== undefined) hold.last = undefined;
  // Kept for the hold: the listings this walk used, and whether it is one a later walk may hand on.
  const used: StoredListing[] | undefined = hold !== undefined && facts === undefined ? [] : undefined;
  const folderPaths: string[] = [];
  let holdable = used !== undefined;
  try {
    const s = statSync(sessionsDir, { throwIfNoEntry: false });
    if (s === undefined) return found;
    if (!s.isDirectory()) {
      problems.push({ path: sessionsDir, code: "unreadable-dir", detail: "ENOTDIR" });
      return found;
    }
    if (used !== undefined && hold !== undefined && last !== undefined) {
      const same = heldWalk(last, memo.get(sessionsDir), s, memo);
      if (same !== undefined) {
        hold.last = last;
        for (const c of last.compactions) compactionFiles?.add(c);
        return same;
      }
    }
    roots = listDir(sessionsDir, s, memo, takenMs, keepRoot);
    used?.push(memo.get(sessionsDir) as StoredListing);
    if (facts !== undefined) pushMark(facts.marks, s);
  } catch (e) {
    const code = errCode(e);
    if (code !== "ENOENT") problems.push({ path: sessionsDir, code: "unreadable-dir", detail: code });
    return found;
  }
  // `<sessions>/` once (dirPrefix): a folder path is one concatenation.
  const under = dirPrefix(sessionsDir);
  // Only a fresh listing of the sessions dir prunes by what is live (see below).
  const live = roots.fresh ? new Set<string>() : undefined;
  const gone: string[] = [];
  const compactions: string[] = [];
  for (const root of roots.entries) {
    const dir = flatConcat(under, root.slice(1));
    const link = root.charCodeAt(0) === L;
    let files: string[];
    try {
      const s = statSync(dir, link ? MAY_BE_GONE : MUST_EXIST);
      // A symlink in the sessions dir that is dangling or not to a folder is not a session
      // folder (Cline never makes one).
      if (facts !== undefined && link) facts.linked = true;
      if (link) holdable = false;
      if (s === undefined || (link && !s.isDirectory())) {
        gone.push(dir);
        continue;
      }
      files = listDir(dir, s, memo, takenMs, keepSession).entries;
      if (used !== undefined) {
        used.push(memo.get(dir) as StoredListing);
        folderPaths.push(dir);
      }
      if (facts !== undefined) {
        pushMark(facts.marks, s);
        facts.folders.push(root.slice(1));
        facts.firstDoc.push(found.length);
      }
    } catch (e) {
      problems.push({ path: dir, code: "unreadable-dir", detail: errCode(e) });
      gone.push(dir);
      holdable = false;
      continue;
    }
    live?.add(dir);
    const prefix = `${dir}/`;
    for (const f of files) {
      const p = flatConcat(prefix, f.slice(1));
      const kind = f.charCodeAt(0);
      if (kind === C) {
        compactionFiles?.add(p);
        compactions.push(p);
      } else if (kind === F) found.push({ path: p, plain: !link });
      else {
        holdable = false;
        if (regularFile(p)) found.push({ path: p, plain: false });
      }
    }
  }
  if (hold !== undefined && used !== undefined && holdable && gone.length === 0)
    hold.last = { listings: used, folders: folderPaths, found, compactions };
  // What the sessions dir no longer has, or what could not be listed, leaves the memo.
  if (live !== undefined) {
    for (const p of [...memo.paths()]) if (p.startsWith(under) && !live.has(p)) memo.drop(p);
  } else {
    for (const dir of gone) memo.drop(dir);
  }
  // In path order without a sort: listings are stored sorted (see sortedListing).
  return found;
}

/**
 * What a walk saw that the quiet-tree snapshot keeps (quiet-tree.ts; walkSessions fills it): the sessions dir's mark
 * numbers, then each folder's, in walk order, with its name and its first document's index among
 * the walk's documents.
 */
export interface WalkFacts {
  readonly marks: number[];
  readonly folders: string[];
  readonly firstDoc: number[];
  /** A folder reached through a symlink (or a dangling one): such a tree gets no snapshot. */
  linked: boolean;
}

export function walkFacts(): WalkFacts {
  return { marks: [], folders: [], firstDoc: [], linked: false };
}

/** Appends a stat's mark numbers (dirMark's fields, as numbers). */
export function pushMark(into: number[], s: Stats): void {
  into.push(s.dev, s.ino, s.mtimeMs, s.ctimeMs);
}

/**
 * Identity of a document for de-duplicating index and walk. A path under the sessions dir
 * with no symlink below it needs no realpath per document: the sessions dir is resolved
 * once. (A document reached two ways that this misses is read twice, never counted twice:
 * the dedup keys collapse it.)
 */
export function canonicalizer(
  sessionsDir: string,
  real: string = realSessionsDir(sessionsDir),
): (path: string, plain: boolean) => string {
  const base = resolve(sessionsDir);
  const under = `${base}/`;
  if (real === base) return (path, plain) => (plain && path.startsWith(under) ? path : canonical(path));
  return (path, plain) =>
    plain && path.startsWith(under) ? real + path.slice(base.length) : canonical(path);
}

/** The sessions dir's real path (canonicalizer's base). */
export function realSessionsDir(sessionsDir: string): string {
  return canonical(resolve(sessionsDir));
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
  /** The session folders' listings (see walkSessions); in-process only by default. */
  dirs?: ListingMemo,
  /** This pass's walk, when the caller already took it (then it filled `compactionFiles`). */
  walk?: SessionsWalk,
  /** The last discovery to hand on when nothing it was built from changed (held-discovery.ts). */
  hold?: DiscoveryHold,
): Promise<ClineDiscovery> {
  const problems: Problem[] = [];
  const sources: Source[] = [];
  const sessionsDir = paths.sessions.path;
  // Before the walk and any read: what a held discovery is compared on (held-discovery.ts).
  const key = hold === undefined ? undefined : indexKey(paths.db.path);
  let walkedDocs: WalkedDocument[];
  if (walk === undefined) walkedDocs = walkSessions(sessionsDir, problems, compactionFiles, dirs);
  else {
    walkedDocs = walk.docs;
    problems.push(...walk.problems);
  }
  const real = realSessionsDir(sessionsDir);
  if (hold !== undefined && key !== undefined) {
    // A held discovery had no problem, its index read included: the same keys read the same.
    const held =
      problems.length === 0
        ? await heldDiscovery(hold, { indexKey: key, real, docs: walkedDocs }, sessionsDir, sidecars)
        : undefined;
    if (held !== undefined) return held;
    hold.last = undefined;
  }
  const index = await readIndex(paths.db.path);
  if (index.status !== "ok" && index.status !== "missing") {
    problems.push({
      path: index.dbPath,
      code: `index-${index.status}`,
      detail: index.problem ?? index.status,
    });
  } else if (index.status === "ok" && index.problem !== undefined) {
    // A whole read that skipped rows (no session_id): counted too.
    problems.push({ path: index.dbPath, code: "index-rows-skipped", detail: index.problem });
  }
  if (index.copyProblem !== undefined) {
    problems.push({ path: index.dbPath, code: "index-copy", detail: index.copyProblem });
  }
  if (index.cacheProblem !== undefined) {
    problems.push({ path: index.dbPath, code: "index-not-remembered", detail: index.cacheProblem });
  }
  const byId = new Map<string, IndexRow>();
  for (const r of index.rows) byId.set(r.sessionId, r);
  const rootOf = (r: IndexRow): string => {
    if (r.parentSessionId !== null) return r.parentSessionId;
    const cut = r.sessionId.indexOf("__");
    return cut < 0 ? r.sessionId : r.sessionId.slice(0, cut);
  };

  const clients = clientNamer();

  const seen = new Set<string>();
  const identity = canonicalizer(sessionsDir, real);
  // Whether every source was found by the walk and the index alone (no stat of discovery's own).
  let walkOnly = true;
  // Each walked path to itself: a source the index names is given the walk's string, not the row's
  // equal copy, so a daemon holding both its walk and its sources keeps each path once (~120 bytes
  // a document; docs/performance.md, "One string per path").
  const walkedPlain = new Map<string, string>();
  for (const d of walkedDocs) if (d.plain) walkedPlain.set(d.path, d.path);
  const walked = (path: string): boolean => walkedPlain.has(path);
  // One string per distinct cwd, not one per index row (a project's sessions share it).
  const projects = new Map<string, string>();
  const oneOf = (cwd: string | null | undefined): string | undefined => {
    if (cwd === null || cwd === undefined) return undefined;
    const held = projects.get(cwd);
    if (held !== undefined) return held;
    projects.set(cwd, cwd);
    return cwd;
  };
  for (const row of index.rows) {
    const p = locateIndexedDocument(row, sessionsDir, walked);
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
    // A path the walk listed, as stored or resolved: not one locateIndexedDocument stat-ed.
    if (!walked(p) || (p !== row.messagesPath && p !== indexDocumentPath(row, sessionsDir))) walkOnly = false;
    const key = identity(p, true);
    if (seen.has(key)) continue;
    seen.add(key);
    const rootSessionId = rootOf(row);
    const root = byId.get(rootSessionId);
    const hint: SessionHint = {
      sessionId: row.sessionId,
      rootSessionId,
      project: oneOf(row.cwd ?? root?.cwd),
      // Sub-agents inherit the parent's source (docs/cline-format.md §6); a row without one takes the root's.
      client: clients.of(row.source ?? root?.source, row.sessionId),
    };
    sources.push({ adapterId: CLINE_ADAPTER_ID, path: walkedPlain.get(p) ?? p, origin: "index", hint });
  }

  const sidecarOf = new Map<string, SidecarFacts>();
  for (const { path: p, plain } of walkedDocs) {
    if (!plain) walkOnly = false;
    const key = identity(p, plain);
    if (seen.has(key)) continue;
    seen.add(key);
    // The root session is the folder's name, whoever's document this is (parser.ts identityFromPath).
    const rootId = basename(dirname(p));
    const row = byId.get(rootId);
    let project = oneOf(row?.cwd);
    let source = row?.source ?? undefined;
    if (project === undefined || row === undefined) {
      let facts = sidecarOf.get(rootId);
      if (facts === undefined) {
        facts = await readSidecar(join(sessionsDir, rootId), rootId, problems, sidecars);
        sidecarOf.set(rootId, facts);
      }
      project ??= oneOf(facts.cwd);
      source ??= facts.source;
    }
    const hint: SessionHint = {
      rootSessionId: rootId,
      ...(project !== undefined ? { project } : {}),
      client: clients.of(source, rootId),
    };
    sources.push({ adapterId: CLINE_ADAPTER_ID, path: p, origin: "walk", hint });
  }
  problems.push(...clients.problems(index.dbPath));
  const discovery: ClineDiscovery = { sources, problems, index: indexFacts(index, sessionsDir) };
  if (key !== undefined && hold !== undefined && walkOnly && problems.length === 0)
    hold.last = { indexKey: key, real, docs: walkedDocs, sidecars: sidecarOf, discovery };
  return discovery;
}

/** A walk of the sessions tree taken before discovery (walkSessions' documents and problems). */
export interface SessionsWalk {
  readonly docs: WalkedDocument[];
  readonly problems: readonly Problem[];
}

/**
 * What discovery remembers across passes: the session folders' listings and the sidecar cwds of
 * unindexed sessions (a sidecar is scanned again only when its size, mtime or inode changed).
 * With a store (the ledger's listings) they outlive the process: an idle `report` stats what it
 * would otherwise list or scan.
 */
export interface DiscoveryMemos {
  readonly dirs: ListingMemo;
  readonly sidecarCwds: ListingMemo;
  readonly sidecars: SidecarCache;
}

export function discoveryMemos(store?: ListingStore, now: () => number = Date.now): DiscoveryMemos {
  const sidecarCwds = listingMemo(SIDECAR_CWDS_SCOPE, store, now);
  return {
    dirs: listingMemo(SESSION_DIRS_SCOPE, store, now),
    sidecarCwds,
    sidecars: persistedSidecars(sidecarCwds),
  };
}

/**
 * After a discovery: forgets the sidecars of session folders the walk no longer has, and writes
 * what changed to the store. A failed write costs the next process a walk, never an event: it is
 * reported as a problem, and what it would have written is tried again at the next flush.
 */
export function flushDiscoveryMemos(memos: DiscoveryMemos, problems: Problem[], where: string): void {
  // Every stored sidecar's folder has a listing after each flush (a sidecar is kept only for a
  // walked folder): only a folder dropped since the last flush (pending) can leave one behind. So
  // a pass that changed no listing loads neither scope here (an idle one, a HOME without sessions).
  if (memos.dirs.pending() > 0) {
    for (const p of [...memos.sidecarCwds.paths()]) {
      if (memos.dirs.get(dirname(p)) === undefined) memos.sidecarCwds.drop(p);
    }
  }
  try {
    memos.dirs.flush();
    memos.sidecarCwds.flush();
  } catch (e) {
    problems.push({ path: where, code: "listings-not-saved", detail: (e as Error).message });
  }
}

/** One copy of the cached index reader, in index-db.ts (kept importable from here). */
export { cachedIndexReader };
