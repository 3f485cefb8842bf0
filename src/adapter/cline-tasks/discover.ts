/**
 * Discovery of the task format: every `tasks/<taskId>/ui_messages.json` of every root that
 * exists. Only that file name is ever listed as a source: the temp files of a whole-file rewrite
 * (`ui_messages.json.tmp.*` and the like), `secrets.json` and `globalState.json` are never opened.
 */
import { readdirSync, type Stats, statSync } from "node:fs";
import { join, sep } from "node:path";
import { dirMark, LISTING_CONFIRM_MS, sameMark } from "../listings.ts";
import type { DiscoverResult, Problem, Source } from "../types.ts";
import type { HistoryCache, HistoryEntry } from "./history.ts";
import { CLINE_TASKS_ADAPTER_ID, type TaskRoot } from "./types.ts";

export const UI_MESSAGES = "ui_messages.json";

/** A roots' discovery: its sources, and which roots exist now (for `paths` and the report). */
export interface TasksDiscovery extends DiscoverResult {
  readonly found: readonly TaskRoot[];
  /** Each found root's taskHistory.json entries by task id. */
  readonly history: ReadonlyMap<string, ReadonlyMap<string, HistoryEntry>>;
  /** What the stat that found each source says to the gate of the pass right after (adapter.ts). */
  readonly stats: DiscoveryStats;
  /** Roots where a listed task has no taskHistory.json entry yet (its cwd may come with one). */
  readonly entryless: ReadonlySet<string>;
}

function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException).code;
}

/**
 * Why a task's `ui_messages.json` path is not a source: absent (not written yet: no problem) or a
 * thing no writer of Cline's makes there (a directory, a FIFO: `not-a-file`, reported, never read).
 */
export function taskFileProblem(path: string, st: Stats | undefined): Problem | undefined {
  if (st === undefined || st.isFile()) return undefined;
  const kind = st.isDirectory() ? "a directory" : "not a regular file";
  return { path, code: "not-a-file", detail: `${UI_MESSAGES} is ${kind}` };
}

/** A `tasks/` dir's task folder names as last listed, with the dir's mark then (listings.ts). */
export interface HeldTaskIds {
  readonly mark: string;
  /** Wall-clock ms read before the stat that gave `mark`. */
  readonly takenMs: number;
  readonly ids: readonly string[];
  /** Each id's `ui_messages.json` path: held with the ids, so a sweep builds no path strings. */
  readonly paths: readonly string[];
  readonly slots: ReadonlyMap<string, number>;
}

/** A `tasks/` dir's task ids, sorted, and each one's `ui_messages.json` path. */
export interface TaskFiles {
  readonly ids: readonly string[];
  readonly paths: readonly string[];
  /** Each path's position in `paths` (built with the listing, held with it). */
  readonly slots: ReadonlyMap<string, number>;
}

/** What the gate compares of a stat (fingerprint.ts unchangedSinceStat). */
export interface GateStat {
  readonly size: number;
  readonly ino: number;
  readonly mtimeMs: number;
}

/**
 * The stats discovery found each task's file by, for the gate: `statOf(path)` is what that stat
 * said, or undefined when discovery did not find the file. Kept as numbers in a typed array per
 * root, not a Stats object per task: an idle sweep over 10,000 tasks held 10,000 Stats objects
 * across its scavenges, copied and promoted (the idle daemon's minute was mostly GC:
 * docs/performance.md). (Here, not compared here: this module must not load the scanner, which
 * `paths` does not need.)
 */
export interface DiscoveryStats {
  statOf(path: string): GateStat | undefined;
  /**
   * Whether the stat that found `path` said this size, inode and mtimeMs (statOf compared, with no
   * object built: the gate of an idle sweep asks it for every task); undefined when discovery did
   * not find the file.
   */
  sameFacts(path: string, size: number, ino: number, mtimeMs: number): boolean | undefined;
}

/** statSync's options for a file that may not exist yet (one object, not one per task per sweep). */
const MAY_BE_GONE = { throwIfNoEntry: false } as const;

/** Size, inode and mtimeMs of each slot; NaN size: not a source (no such file, or not a file). */
const FACTS = 3;

interface StattedRoot {
  readonly files: TaskFiles;
  readonly facts: Float64Array;
}

function discoveryStats(roots: readonly StattedRoot[]): DiscoveryStats {
  // The gate asks in discovery's order: the slot after the last one found is tried first, a
  // string comparison (the held path itself: same object) instead of a hash lookup.
  let at = 0;
  let next = 0;
  /** The fact base of `path` (k * FACTS in roots[at].facts), or -1. */
  const locate = (path: string): number => {
    const guess = roots[at];
    if (guess !== undefined && guess.files.paths[next] === path) {
      next++;
      return (next - 1) * FACTS;
    }
    for (let r = 0; r < roots.length; r++) {
      const k = (roots[r] as StattedRoot).files.slots.get(path);
      if (k === undefined) continue;
      at = r;
      next = k + 1;
      return k * FACTS;
    }
    return -1;
  };
  return {
    statOf(path) {
      const b = locate(path);
      if (b < 0) return undefined;
      const facts = (roots[at] as StattedRoot).facts;
      const size = facts[b] as number;
      if (Number.isNaN(size)) return undefined;
      return { size, ino: facts[b + 1] as number, mtimeMs: facts[b + 2] as number };
    },
    sameFacts(path, size, ino, mtimeMs) {
      const b = locate(path);
      if (b < 0) return undefined;
      const facts = (roots[at] as StattedRoot).facts;
      if (Number.isNaN(facts[b] as number)) return undefined;
      return facts[b] === size && facts[b + 1] === ino && facts[b + 2] === mtimeMs;
    },
  };
}

function readTaskFiles(tasksDir: string): TaskFiles {
  const ids = readdirSync(tasksDir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  // `tasksDir` is normalized and a listed name holds no separator: no join per task.
  const prefix = `${tasksDir}${sep}`;
  const paths = ids.map((id) => `${prefix}${id}${sep}${UI_MESSAGES}`);
  return { ids, paths, slots: new Map(paths.map((p, k) => [p, k])) };
}

/**
 * The task folder names of `tasksDir`, sorted: with a memo, the held names while the dir's mark
 * holds and the listing is confirmed (taken LISTING_CONFIRM_MS after the dir's last change), i.e.
 * a stat instead of a readdir of 10,000 entries at each idle sweep; a task added or removed
 * changes the dir's mtime and ctime. Throws stat's or readdir's error (ENOENT: no such root).
 */
export function listTaskIds(
  tasksDir: string,
  memo?: Map<string, HeldTaskIds>,
  now: () => number = Date.now,
): readonly string[] {
  return listTaskFiles(tasksDir, memo, now).ids;
}

/** listTaskIds, with each task's `ui_messages.json` path (held with the ids). */
export function listTaskFiles(
  tasksDir: string,
  memo?: Map<string, HeldTaskIds>,
  now: () => number = Date.now,
): TaskFiles {
  if (memo === undefined) return readTaskFiles(tasksDir);
  const takenMs = now();
  let s: Stats;
  try {
    s = statSync(tasksDir);
  } catch (e) {
    memo.delete(tasksDir);
    throw e;
  }
  const held = memo.get(tasksDir);
  if (
    held !== undefined &&
    held.takenMs - Math.max(s.mtimeMs, s.ctimeMs) >= LISTING_CONFIRM_MS &&
    sameMark(held.mark, s)
  ) {
    return held;
  }
  memo.delete(tasksDir);
  // The held object itself is returned: a discovery knows a listing by its identity (heldSweep).
  const listed: HeldTaskIds = { mark: dirMark(s), takenMs, ...readTaskFiles(tasksDir) };
  memo.set(tasksDir, listed);
  return listed;
}

/**
 * What discovery keeps between its calls in one process: each `tasks/` listing (listTaskFiles)
 * and what each root's last discovery found, so an idle sweep only stats (heldSweep).
 */
export interface DiscoveryMemo {
  readonly listings: Map<string, HeldTaskIds>;
  readonly roots: Map<string, HeldRootSweep>;
  /** The last discovery's found roots and whole source list, handed on when every root was held. */
  last?: { readonly found: readonly TaskRoot[]; readonly sources: readonly Source[] };
}

export function discoveryMemo(): DiscoveryMemo {
  return { listings: new Map(), roots: new Map() };
}

/**
 * One root's last discovery: the listing and the history entries it was computed from (by
 * identity: a held listing and an unchanged taskHistory.json are the same objects), each slot's
 * stat facts, the root's sources, and whether one of them had no history entry. Kept only for a
 * root where no task was a problem, so a problem is reported again by every discovery.
 */
export interface HeldRootSweep {
  readonly files: TaskFiles;
  readonly entries: ReadonlyMap<string, HistoryEntry>;
  readonly facts: Float64Array;
  readonly sources: readonly Source[];
  readonly entryless: boolean;
}

/**
 * The idle sweep of a root whose listing and history entries are the last discovery's: only a
 * stat per task, its three numbers stored, and no lookup of its entry, project or last Source.
 * True when every task is as the last discovery found it (a file then and now, or absent then and
 * now): its sources are then those same objects. False at the first task that differs (a file gone
 * or come, a directory, a failed stat): the caller discovers the root in full, which reports it.
 */
function heldSweep(files: TaskFiles, last: Float64Array, facts: Float64Array): boolean {
  const paths = files.paths;
  for (let k = 0, b = 0; k < paths.length; k++, b += FACTS) {
    let st: Stats | undefined;
    try {
      st = statSync(paths[k] as string, MAY_BE_GONE);
    } catch {
      // Not skipped: the full discovery of the root stats it again and reports the error.
      return false;
    }
    const was = !Number.isNaN(last[b] as number);
    if (st === undefined) {
      if (was) return false;
      continue;
    }
    if (!was || !st.isFile()) return false;
    facts[b] = st.size;
    facts[b + 1] = st.ino;
    facts[b + 2] = st.mtimeMs;
  }
  return true;
}

/** Whether two lists hold the same roots (by identity), in the same order. */
function sameRoots(a: readonly TaskRoot[], b: readonly TaskRoot[]): boolean {
  return a.length === b.length && a.every((r, i) => r === b[i]);
}

/**
 * `previous`: the last discovery's sources by path; one that is listed again with the same hint is
 * that same object (an idle pass over 10,000 tasks allocates no new Source, and collects less).
 * `memo`: what is held across discoveries of one process (DiscoveryMemo); with it, a root whose
 * listing and history are unchanged is swept by stats alone (heldSweep), and when every root was,
 * the result's `sources` is the last discovery's very array (the loop then compares nothing).
 */
export async function discoverTasks(
  roots: readonly TaskRoot[],
  history: HistoryCache,
  previous: ReadonlyMap<string, Source> = new Map(),
  memo?: DiscoveryMemo,
): Promise<TasksDiscovery> {
  const perRoot: (readonly Source[])[] = [];
  const problems: Problem[] = [];
  const found: TaskRoot[] = [];
  const unlisted: string[] = [];
  const byRoot = new Map<string, ReadonlyMap<string, HistoryEntry>>();
  const statted: StattedRoot[] = [];
  const entryless = new Set<string>();
  let allHeld = true;
  for (const root of roots) {
    const tasksDir = join(root.path, "tasks");
    let files: TaskFiles;
    try {
      files = listTaskFiles(tasksDir, memo?.listings);
    } catch (e) {
      memo?.roots.delete(root.path);
      // A root that does not exist is the normal case for most candidates: not a problem.
      if (errCode(e) === "ENOENT" || errCode(e) === "ENOTDIR") continue;
      problems.push({
        path: tasksDir,
        code: "unlistable",
        detail: `readdir failed: ${errCode(e) ?? String(e)}`,
      });
      unlisted.push(tasksDir);
      allHeld = false;
      continue;
    }
    found.push(root);
    const entries = await history.read(root.path, problems);
    byRoot.set(root.path, entries);
    const facts = new Float64Array(files.ids.length * FACTS).fill(Number.NaN);
    statted.push({ files, facts });
    const held = memo?.roots.get(root.path);
    if (
      held !== undefined &&
      held.files === files &&
      held.entries === entries &&
      heldSweep(files, held.facts, facts)
    ) {
      if (held.entryless) entryless.add(root.path);
      memo?.roots.set(root.path, { ...held, facts });
      perRoot.push(held.sources);
      continue;
    }
    allHeld = false;
    if (held !== undefined) facts.fill(Number.NaN);
    const r = sweepRoot(files, entries, previous, facts);
    problems.push(...r.problems);
    if (r.entryless) entryless.add(root.path);
    perRoot.push(r.sources);
    if (memo === undefined) continue;
    if (r.problems.length === 0) {
      memo.roots.set(root.path, { files, entries, facts, sources: r.sources, entryless: r.entryless });
    } else memo.roots.delete(root.path);
  }
  const last = memo?.last;
  const sources =
    allHeld && last !== undefined && sameRoots(last.found, found) ? last.sources : perRoot.flat();
  if (memo !== undefined) memo.last = { found, sources };
  return {
    sources,
    problems,
    found,
    history: byRoot,
    stats: discoveryStats(statted),
    entryless,
    listings: [{ adapterId: CLINE_TASKS_ADAPTER_ID, unlisted }],
  };
}

/** A root's full discovery: a stat of each task, its entry and project, its last Source if unchanged. */
function sweepRoot(
  files: TaskFiles,
  entries: ReadonlyMap<string, HistoryEntry>,
  previous: ReadonlyMap<string, Source>,
  facts: Float64Array,
): { readonly sources: Source[]; readonly problems: Problem[]; readonly entryless: boolean } {
  const sources: Source[] = [];
  const problems: Problem[] = [];
  let entryless = false;
  const { ids, paths } = files;
  for (let k = 0; k < ids.length; k++) {
    const id = ids[k] as string;
    const path = paths[k] as string;
    // A task folder without messages yet (just created) is listed once it has them.
    let st: Stats | undefined;
    try {
      st = statSync(path, MAY_BE_GONE);
    } catch (e) {
      problems.push({ path, code: "unreadable", detail: `stat failed: ${errCode(e) ?? String(e)}` });
      continue;
    }
    const notFile = taskFileProblem(path, st);
    if (notFile !== undefined) problems.push(notFile);
    if (st === undefined || notFile !== undefined) continue;
    facts[k * FACTS] = st.size;
    facts[k * FACTS + 1] = st.ino;
    facts[k * FACTS + 2] = st.mtimeMs;
    const entry = entries.get(id);
    if (entry === undefined) entryless = true;
    const project = entry?.project || undefined;
    const prev = previous.get(path);
    if (prev !== undefined && prev.hint.project === project) {
      sources.push(prev);
      continue;
    }
    sources.push({
      adapterId: CLINE_TASKS_ADAPTER_ID,
      path,
      origin: "walk",
      hint: { sessionId: id, rootSessionId: id, ...(project ? { project } : {}) },
    });
  }
  return { sources, problems, entryless };
}

/** For `paths`: how many task folders a root holds, or undefined when it does not exist (listing only). */
export function taskFolderCount(root: TaskRoot): number | undefined {
  try {
    return readdirSync(join(root.path, "tasks"), { withFileTypes: true }).filter((d) => d.isDirectory())
      .length;
  } catch (e) {
    if (errCode(e) === "ENOENT" || errCode(e) === "ENOTDIR") return undefined;
    throw e;
  }
}
