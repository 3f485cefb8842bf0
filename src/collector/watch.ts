import { existsSync, type FSWatcher, statSync, watch } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import type { WatchPlan } from "../adapter/types.ts";
import type { Logger } from "../util/log.ts";
import { type HeldSubdirectories, rememberedSubdirectories, sameDirSet } from "./watch-inputs.ts";

export type { WatchPlan } from "../adapter/types.ts";

/** What a filesystem event means for the next pass. */
export interface WatchEvent {
  /** The file that changed, when the event names one. */
  readonly path?: string;
  /**
   * The set of sources may have changed (a file or session appeared or went away, the index
   * changed, or the event named nothing): the next pass must run discovery again. Otherwise
   * only `path` needs a look.
   */
  readonly rediscover: boolean;
  /**
   * The event was a rename at `path`: a whole-file rewrite through a temp file (a new file, a
   * new inode) or the file going away. Named for a source file only: when it names a known
   * source that still exists, re-reading it is enough; otherwise discovery must run.
   */
  readonly renamed?: boolean;
}

export interface WatchOptions {
  /** Every adapter's plan (a plan per root): the watched set is their union. */
  readonly plans: readonly WatchPlan[];
  readonly onChange: (event: WatchEvent) => void;
  readonly logger: Logger;
  /**
   * Upper bound on watched source directories (inotify watches are a per-user kernel budget).
   * Past it the newest directories are watched and the others left to the sweep (sweptOnly).
   */
  readonly maxDirs?: number;
}

/**
 * Source directories watched at most: the newest by mtime (a new one is always watched at once).
 * Each watch costs the process ~2.7 KB of memory (Node's FSWatcher and libuv's handle, ~2 KB, and
 * ours) and the user's inotify budget one watch, whatever the history: 16,384 watches were ~44 MB
 * of a daemon over 30,000 sessions. Cline writes to the sessions in use, the newest; an older one
 * resumed has its first change read by the sweep (every 60 s), and is watched from then on
 * (`promote`; docs/performance.md, "The daemon over 30,000 sessions").
 */
export const DEFAULT_MAX_DIRS = 1024;

/**
 * The `max` directories to watch out of `dirs`, newest first by modification time (a new session
 * or task folder, or one a file was just created in), and the rest. A directory that cannot be
 * stat-ed counts as the oldest. Ties keep their order.
 */
export function newestDirs(
  dirs: readonly string[],
  max: number,
  mtimeOf: (dir: string) => number = (d) => statSync(d, { throwIfNoEntry: false })?.mtimeMs ?? 0,
): { readonly watched: readonly string[]; readonly rest: readonly string[] } {
  if (dirs.length <= max) return { watched: dirs, rest: [] };
  const byAge = dirs.map((d, i) => ({ d, i, t: mtimeOf(d) }));
  byAge.sort((a, b) => b.t - a.t || a.i - b.i);
  return { watched: byAge.slice(0, max).map((x) => x.d), rest: byAge.slice(max).map((x) => x.d) };
}

/** The plan index of a source directory under no plan's sources root: any plan's source names. */
const ANY_PLAN = -1;

/**
 * Why one directory is watched, for one plan: several plans may want the same directory (an
 * ancestor of two roots not created yet), and its one watch serves them all.
 */
interface Interest {
  readonly role: Role;
  /** Index into the plans, or ANY_PLAN. */
  readonly plan: number;
  /** For an ancestor: the names on the way to the directories it stands in for. */
  readonly names?: ReadonlySet<string>;
}

/**
 * Watches what the plans name: each sources root (new source folders), each index dir (the
 * index files), any other dirs given, and the directory of every source. One inotify watch per
 * directory (not per file, as Node's recursive watch would make on Linux: 3x the watches for a
 * Cline tree) reports every in-place rewrite of the documents in it, and every rename onto one.
 * A directory that could not be watched (the kernel's budget, permissions) makes the watch
 * incomplete, and the caller then polls. Source directories beyond `maxDirs` are not a failure:
 * the newest are watched and the older ones, which Cline writes to the least, are left to the
 * caller's sweep (sweptOnly); polling everything every few seconds instead cost an idle daemon
 * 4.2 s of CPU a minute at 30,000 sessions (docs/performance.md, "More folders than watches").
 */
export class DirWatcher {
  private readonly watchers = new Map<string, { readonly watcher: FSWatcher; readonly key: string }>();
  private refused = false;
  /** Source directories left unwatched by `maxDirs` at the last refresh (the oldest). */
  private beyondCap = new Set<string>();
  /** Of those, watched since by `promote` (until a refresh computes the set again). */
  private promoted = 0;
  private warned = false;
  private noted = false;
  private closed = false;
  /** The sources roots' folders as last listed (a stat per root instead of a readdir). */
  private readonly rootListings = new Map<string, HeldSubdirectories>();
  /** What the last complete refresh was computed from (see refresh): undefined = compute again. */
  private last: { readonly roots: string; readonly sourceDirs: ReadonlySet<string> } | undefined;

  constructor(private readonly opts: WatchOptions) {}

  /** The directories currently watched (tests, debug logs). */
  watched(): string[] {
    return [...this.watchers.keys()];
  }

  /** Whether changes of the files directly in `dir` are reported. */
  covers(dir: string): boolean {
    return this.watchers.has(dir);
  }

  /**
   * Whether every directory asked for is watched (no budget or permission refusal), but the
   * oldest source directories left to the sweep by `maxDirs` (sweptOnly).
   */
  get complete(): boolean {
    return !this.refused;
  }

  /** Whether `dir` is a source directory left unwatched by `maxDirs`: only the sweep looks at it. */
  sweptOnly(dir: string): boolean {
    return this.beyondCap.has(dir);
  }

  /**
   * Re-computes the watched set from the plans and the directories of the current sources; call
   * after each discovery. Returns the source directories watched from now on that were not
   * before: what changed in them before their watch existed is unknown to the caller.
   */
  refresh(sourceDirs: Iterable<string>): string[] {
    if (this.closed) return [];
    const dirSet = sourceDirs instanceof Set ? (sourceDirs as ReadonlySet<string>) : new Set(sourceDirs);
    const plans = this.opts.plans;
    const wanted = new Map<string, Interest[]>();
    const want = (dir: string, i: Interest): void => {
      const list = wanted.get(dir);
      if (list === undefined) wanted.set(dir, [i]);
      else list.push(i);
    };
    // A directory not created yet: watch its nearest existing ancestor for the one name on the
    // way to it; that name appearing triggers a discovery, after which the next level is watched.
    const wantAt = (dir: string, role: Role, plan: number): void => {
      const at = existingAncestor(dir);
      if (at === dir) want(dir, { role, plan });
      else want(at, { role: "ancestor", plan, names: new Set([nextName(at, dir)]) });
    };
    plans.forEach((p, i) => {
      wantAt(p.indexDir, "db", i);
      wantAt(p.sourcesRoot, "sessions", i);
      for (const d of p.otherDirs ?? []) wantAt(d, "other", i);
    });
    // Every source folder, with documents or not yet: its first document must be seen too.
    const listed = plans.map((p) => rememberedSubdirectories(p.sourcesRoot, this.rootListings));
    const roots = rootsKey(wanted);
    if (unchangedInputs(this.last, roots, listed, dirSet)) return [];
    const max = this.opts.maxDirs ?? DEFAULT_MAX_DIRS;
    this.refused = false;
    this.last = undefined;
    // Each source folder once, with its plan (a listed folder's own, else by its parent).
    const folders = new Map<string, number>();
    listed.forEach((l, i) => {
      for (const d of l.dirs) if (!wanted.has(d) && !folders.has(d)) folders.set(d, i);
    });
    const rootIndex = new Map(plans.map((p, i) => [p.sourcesRoot, i]));
    for (const d of dirSet)
      if (!wanted.has(d) && !folders.has(d)) folders.set(d, rootIndex.get(dirname(d)) ?? ANY_PLAN);
    const { watched, rest } = newestDirs([...folders.keys()], max);
    for (const d of watched) want(d, { role: "session", plan: folders.get(d) as number });
    this.beyondCap = new Set(rest);
    this.promoted = 0;
    if (rest.length > 0)
      this.note(
        `watching the newest ${max} of ${folders.size} source directories (the watch budget); the other ${rest.length} are looked at by the periodic sweep`,
      );
    for (const [dir, w] of this.watchers) {
      const now = wanted.get(dir);
      if (now === undefined || keyOf(now) !== w.key) {
        w.watcher.close();
        this.watchers.delete(dir);
      }
    }
    const added: string[] = [];
    for (const [dir, interests] of wanted) {
      if (this.watchers.has(dir)) continue;
      if (this.add(dir, interests) && interests.some((i) => i.role === "session")) added.push(dir);
    }
    // Only a refresh that watched all it wanted may be skipped next time (a refused or failed
    // directory is tried again at each refresh).
    if (!this.refused && [...wanted.keys()].every((d) => this.watchers.has(d))) {
      this.last = { roots, sourceDirs: dirSet };
    }
    return added;
  }

  /**
   * Watches source directories left to the sweep in which a pass just read a change: a session
   * resumed behind more than `maxDirs` newer ones is followed by events from then on, not once a
   * sweep. At most a quarter of `maxDirs` beyond it, until a refresh computes the set again (a
   * new folder), which ranks every folder by mtime. Returns the directories now watched.
   */
  promote(dirs: Iterable<string>): string[] {
    if (this.closed) return [];
    const room = Math.max(1, Math.floor((this.opts.maxDirs ?? DEFAULT_MAX_DIRS) / 4));
    const added: string[] = [];
    for (const d of dirs) {
      if (this.promoted >= room) break;
      if (!this.beyondCap.has(d)) continue;
      const root = dirname(d);
      const plan = this.opts.plans.findIndex((p) => p.sourcesRoot === root);
      if (!this.add(d, [{ role: "session", plan: plan < 0 ? ANY_PLAN : plan }])) continue;
      this.beyondCap.delete(d);
      this.promoted++;
      added.push(d);
    }
    return added;
  }

  close(): void {
    this.closed = true;
    for (const w of this.watchers.values()) w.watcher.close();
    this.watchers.clear();
  }

  private refuse(why: string): void {
    this.refused = true;
    if (this.warned) return;
    this.warned = true;
    this.opts.logger.warn(`cannot watch every directory (${why}); polling picks up the rest`);
  }

  /** Said once: the source directories outgrew `maxDirs`. */
  private note(what: string): void {
    if (this.noted) return;
    this.noted = true;
    this.opts.logger.info(what);
  }

  private add(dir: string, interests: readonly Interest[]): boolean {
    if (this.watchers.has(dir) || this.closed) return this.watchers.has(dir);
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, { persistent: false }, (eventType, filename) => {
        const f = filename?.toString() ?? null;
        if (f === null) {
          this.opts.onChange({ rediscover: true });
          return;
        }
        for (const i of interests) this.handle(dir, i, eventType, f);
      });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // Not there (yet), or not a directory: the next refresh tries again.
      if (code === "ENOENT" || code === "ENOTDIR") return false;
      this.refuse(`${dir}: ${code ?? String(e)}`);
      return false;
    }
    watcher.on("error", () => {
      // The directory went away or the watch broke: drop it, the next refresh re-adds it if it exists.
      watcher.close();
      if (this.watchers.get(dir)?.watcher === watcher) this.watchers.delete(dir);
      this.last = undefined;
      this.opts.onChange({ rediscover: true });
    });
    this.watchers.set(dir, { watcher, key: keyOf(interests) });
    return true;
  }

  /** One event in `dir`, as one interest in it reads it. */
  private handle(dir: string, i: Interest, eventType: string, f: string): void {
    if (!this.relevant(i, f)) return;
    const path = join(dir, f);
    if (i.role === "ancestor") {
      this.opts.onChange({ rediscover: true });
      return;
    }
    if (i.role === "sessions") {
      // A new source folder: watch it at once so its first document write is seen (past
      // `maxDirs` too: the next refresh leaves the then oldest to the sweep).
      if (this.add(path, [{ role: "session", plan: i.plan }])) this.opts.onChange({ path, rediscover: true });
      else this.opts.onChange({ rediscover: true });
      return;
    }
    // An index rewritten (2-4 times per request for some agents) that its adapter needs nothing of now.
    if (i.role === "db" && this.opts.plans[i.plan]?.needsIndex?.() === false) return;
    if (i.role !== "session") {
      this.opts.onChange({ path, rediscover: true });
      return;
    }
    // Documents rewritten in place are a "change"; a "rename" is a file appearing or going (a
    // whole-file rewrite through a temp file is a rename onto the document's name): the loop
    // tells a known source replaced from a new or vanished one.
    if (eventType === "change") this.opts.onChange({ path, rediscover: false });
    else if (this.renamesRediscover(i)) this.opts.onChange({ path, rediscover: true });
    else this.opts.onChange({ path, rediscover: false, renamed: true });
  }

  /** Whether the plan of a source directory asked for discovery on every rename (WatchPlan). */
  private renamesRediscover(i: Interest): boolean {
    const plans = this.opts.plans;
    if (i.plan === ANY_PLAN) return plans.some((p) => p.renamesRediscover === true);
    return plans[i.plan]?.renamesRediscover === true;
  }

  /** Which file names in a watched directory matter to one interest. */
  private relevant(i: Interest, name: string): boolean {
    const plans = this.opts.plans;
    if (i.role === "ancestor") return i.names?.has(name) === true;
    if (i.role === "db") return plans[i.plan]?.isIndexFile(name) === true;
    if (i.role === "session") {
      if (i.plan === ANY_PLAN) return plans.some((p) => p.isSourceFile(name));
      return plans[i.plan]?.isSourceFile(name) === true;
    }
    return true;
  }
}

type Role = "db" | "sessions" | "session" | "other" | "ancestor";

/** What a watch serves, comparable across refreshes: a watch whose interests changed is remade. */
function keyOf(interests: readonly Interest[]): string {
  return interests
    .map((i) => `${i.role}:${i.plan}:${[...(i.names ?? [])].sort().join("/")}`)
    .sort()
    .join("|");
}

/** The first path component of `dir` below its ancestor `at`. */
function nextName(at: string, dir: string): string {
  return relative(at, dir).split(sep)[0] ?? "";
}

/** The watched roots and ancestors (not the source folders) with their interests, as one string. */
function rootsKey(wanted: ReadonlyMap<string, readonly Interest[]>): string {
  let k = "";
  for (const [dir, interests] of wanted) k += `${dir}\0${keyOf(interests)}\n`;
  return k;
}

/**
 * Whether a refresh would watch exactly what the last complete one did: the same roots and
 * ancestors, every sources root's listing the held one, and the same source folders. Then the
 * watches already match and the refresh is skipped (the idle daemon's sweep, every minute).
 */
export function unchangedInputs(
  last: { readonly roots: string; readonly sourceDirs: ReadonlySet<string> } | undefined,
  roots: string,
  listed: readonly { readonly fresh: boolean }[],
  sourceDirs: ReadonlySet<string>,
): boolean {
  return (
    last !== undefined &&
    last.roots === roots &&
    listed.every((l) => !l.fresh) &&
    sameDirSet(last.sourceDirs, sourceDirs)
  );
}

function existingAncestor(dir: string): string {
  let d = dir;
  while (!existsSync(d)) {
    const up = dirname(d);
    if (up === d) return d;
    d = up;
  }
  return d;
}
