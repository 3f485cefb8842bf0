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
}

/** statSync's options for a file that may not exist yet (one object, not one per task per sweep). */
const MAY_BE_GONE = { throwIfNoEntry: false } as const;

/** Size, inode and mtimeMs of each slot; NaN size: not a source (no such file, or not a file). */
const FACTS = 3;

function discoveryStats(
  roots: readonly { readonly files: TaskFiles; readonly facts: Float64Array }[],
): DiscoveryStats {
  return {
    statOf(path) {
      for (const { files, facts } of roots) {
        const k = files.slots.get(path);
        if (k === undefined) continue;
        const size = facts[k * FACTS] as number;
        if (Number.isNaN(size)) return undefined;
        return { size, ino: facts[k * FACTS + 1] as number, mtimeMs: facts[k * FACTS + 2] as number };
      }
      return undefined;
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
  const files = readTaskFiles(tasksDir);
  memo.set(tasksDir, { mark: dirMark(s), takenMs, ...files });
  return files;
}

/**
 * `previous`: the last discovery's sources by path; one that is listed again with the same hint is
 * that same object (an idle pass over 10,000 tasks allocates no new Source, and collects less).
 */
export async function discoverTasks(
  roots: readonly TaskRoot[],
  history: HistoryCache,
  previous: ReadonlyMap<string, Source> = new Map(),
  /** The `tasks/` listings held across discoveries of one process (listTaskIds). */
  held?: Map<string, HeldTaskIds>,
): Promise<TasksDiscovery> {
  const sources: Source[] = [];
  const problems: Problem[] = [];
  const found: TaskRoot[] = [];
  const unlisted: string[] = [];
  const byRoot = new Map<string, ReadonlyMap<string, HistoryEntry>>();
  const statted: { files: TaskFiles; facts: Float64Array }[] = [];
  const entryless = new Set<string>();
  for (const root of roots) {
    const tasksDir = join(root.path, "tasks");
    let files: TaskFiles;
    try {
      files = listTaskFiles(tasksDir, held);
    } catch (e) {
      // A root that does not exist is the normal case for most candidates: not a problem.
      if (errCode(e) === "ENOENT" || errCode(e) === "ENOTDIR") continue;
      problems.push({
        path: tasksDir,
        code: "unlistable",
        detail: `readdir failed: ${errCode(e) ?? String(e)}`,
      });
      unlisted.push(tasksDir);
      continue;
    }
    found.push(root);
    const entries = await history.read(root.path, problems);
    byRoot.set(root.path, entries);
    const { ids, paths } = files;
    const facts = new Float64Array(ids.length * FACTS).fill(Number.NaN);
    statted.push({ files, facts });
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
      if (entry === undefined) entryless.add(root.path);
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
  }
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
