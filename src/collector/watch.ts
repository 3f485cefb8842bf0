import { existsSync, type FSWatcher, readdirSync, watch } from "node:fs";
import { dirname, join } from "node:path";
import type { WatchPlan } from "../adapter/types.ts";
import type { Logger } from "../util/log.ts";

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
}

export interface WatchOptions extends WatchPlan {
  readonly onChange: (event: WatchEvent) => void;
  readonly logger: Logger;
  /** Upper bound on watched source directories (inotify watches are a per-user kernel budget). */
  readonly maxDirs?: number;
}

const DEFAULT_MAX_DIRS = 16_384;

/**
 * Watches what Cline writes: the sessions dir (new sessions), the db dir (the sessions.db index
 * and its WAL), any other dirs given, and the directory of every source. One inotify watch per
 * directory (not per file, as Node's recursive watch would make on Linux: 3x the watches for a
 * Cline tree) reports every in-place rewrite of the documents in it. A directory that could not
 * be watched (budget, permissions) makes the watch incomplete, and the caller then polls.
 */
export class DirWatcher {
  private readonly watchers = new Map<string, { readonly watcher: FSWatcher; readonly role: Role }>();
  private refused = false;
  private warned = false;
  private closed = false;

  constructor(private readonly opts: WatchOptions) {}

  /** The directories currently watched (tests, debug logs). */
  watched(): string[] {
    return [...this.watchers.keys()];
  }

  /** Whether changes of the files directly in `dir` are reported. */
  covers(dir: string): boolean {
    return this.watchers.has(dir);
  }

  /** Whether every directory asked for is watched (no budget or permission refusal). */
  get complete(): boolean {
    return !this.refused;
  }

  /**
   * Re-computes the watched set from the directories of the current sources; call after each
   * discovery. Returns the source directories watched from now on that were not before: what
   * changed in them before their watch existed is unknown to the caller.
   */
  refresh(sourceDirs: Iterable<string>): string[] {
    if (this.closed) return [];
    const { sourcesRoot, indexDir } = this.opts;
    const wanted = new Map<string, Role>();
    // A directory Cline has not created yet: watch its nearest existing ancestor, whose change
    // (the directory appearing) triggers a discovery, after which the directory itself is watched.
    for (const [dir, role] of [
      [indexDir, "db"],
      [sourcesRoot, "sessions"],
      ...(this.opts.otherDirs ?? []).map((d) => [d, "other"] as const),
    ] as const) {
      const at = existingAncestor(dir);
      if (!wanted.has(at)) wanted.set(at, at === dir ? role : "ancestor");
    }
    const max = this.opts.maxDirs ?? DEFAULT_MAX_DIRS;
    let sessions = 0;
    this.refused = false;
    // Every session folder, with documents or not yet: its first document must be seen too.
    for (const d of [...subdirectories(sourcesRoot), ...sourceDirs]) {
      if (wanted.has(d)) continue;
      if (sessions >= max) {
        this.refuse(`more than ${max} session directories`);
        break;
      }
      wanted.set(d, "session");
      sessions++;
    }
    for (const [dir, w] of this.watchers) {
      if (wanted.get(dir) !== w.role) {
        w.watcher.close();
        this.watchers.delete(dir);
      }
    }
    const added: string[] = [];
    for (const [dir, role] of wanted) {
      if (this.watchers.has(dir)) continue;
      if (this.add(dir, role) && role === "session") added.push(dir);
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

  private add(dir: string, role: Role): boolean {
    if (this.watchers.has(dir) || this.closed) return this.watchers.has(dir);
    const relevant = relevantIn(role, this.opts);
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, { persistent: false }, (eventType, filename) => {
        const f = filename?.toString() ?? null;
        if (f === null) {
          this.opts.onChange({ rediscover: true });
          return;
        }
        if (!relevant(f)) return;
        const path = join(dir, f);
        if (role === "sessions") {
          // A new session directory: watch it at once so its first document write is seen.
          if (this.add(path, "session")) this.opts.onChange({ path, rediscover: true });
          else this.opts.onChange({ rediscover: true });
          return;
        }
        // Cline rewrites documents in place ("change"); a "rename" is a file appearing or going.
        this.opts.onChange({ path, rediscover: role !== "session" || eventType !== "change" });
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
      this.opts.onChange({ rediscover: true });
    });
    this.watchers.set(dir, { watcher, role });
    return true;
  }
}

type Role = "db" | "sessions" | "session" | "other" | "ancestor";

/** Which file names in a watched directory matter. */
function relevantIn(role: Role, plan: WatchPlan): (name: string) => boolean {
  if (role === "db") return plan.isIndexFile;
  if (role === "session") return plan.isSourceFile;
  return () => true;
}

/** The source folders of the sources root (none when it does not exist yet). */
function subdirectories(root: string): string[] {
  try {
    return readdirSync(root, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => join(root, d.name));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    throw e;
  }
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
