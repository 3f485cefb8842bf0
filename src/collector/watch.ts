import { existsSync, type FSWatcher, readdirSync, watch } from "node:fs";
import { dirname, join } from "node:path";
import type { Logger } from "../util/log.ts";

export interface WatchOptions {
  readonly sessionsDir: string;
  readonly dbDir: string;
  /** Something Cline writes changed (debounced by the caller). */
  readonly onChange: () => void;
  readonly logger: Logger;
  /** Newest session directories watched whatever happened lately (root ids start with epoch ms). */
  readonly newestSessions?: number;
  /** Upper bound on watched directories (inotify watches are a per-user kernel budget). */
  readonly maxDirs?: number;
}

const SUFFIX = ".messages.json";

/**
 * Watches what Cline writes, without a recursive watch (on Linux that costs one inotify
 * watch per directory of the whole tree): the sessions dir (new sessions), the db dir (the
 * sessions.db index and its WAL), and a bounded set of session directories: the newest
 * ones plus those whose documents changed lately. Anything else is caught by polling.
 */
export class DirWatcher {
  private readonly watchers = new Map<string, { readonly watcher: FSWatcher; readonly role: Role }>();
  private limited = false;
  private closed = false;

  constructor(private readonly opts: WatchOptions) {}

  /** The directories currently watched (tests, debug logs). */
  watched(): string[] {
    return [...this.watchers.keys()];
  }

  /** Re-computes the watched set: call after each pass with the directories read lately. */
  refresh(hotDirs: Iterable<string>): void {
    if (this.closed) return;
    const { sessionsDir, dbDir } = this.opts;
    const wanted = new Map<string, Role>();
    // A directory Cline has not created yet: watch its nearest existing ancestor, whose change
    // (the directory appearing) triggers a pass, after which the directory itself is watched.
    for (const [dir, role] of [
      [dbDir, "db"],
      [sessionsDir, "sessions"],
    ] as const) {
      const at = existingAncestor(dir);
      wanted.set(at, at === dir ? role : "ancestor");
    }
    for (const d of newestSessionDirs(sessionsDir, this.opts.newestSessions ?? 32)) {
      if (!wanted.has(d)) wanted.set(d, "session");
    }
    const max = this.opts.maxDirs ?? 512;
    for (const d of hotDirs) {
      if (wanted.size >= max) break;
      if (!wanted.has(d)) wanted.set(d, "session");
    }
    for (const [dir, w] of this.watchers) {
      if (wanted.get(dir) !== w.role) {
        w.watcher.close();
        this.watchers.delete(dir);
      }
    }
    for (const [dir, role] of wanted) this.add(dir, role);
  }

  close(): void {
    this.closed = true;
    for (const w of this.watchers.values()) w.watcher.close();
    this.watchers.clear();
  }

  private add(dir: string, role: Role): void {
    if (this.watchers.has(dir) || this.closed) return;
    // Past the inotify budget only the top directories are still attempted.
    if (this.limited && role === "session") return;
    const relevant = RELEVANT[role];
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, { persistent: false }, (_event, filename) => {
        const f = filename?.toString() ?? null;
        if (f !== null && !relevant(f)) return;
        // A new session directory: watch it at once so its first document write is seen.
        if (role === "sessions" && f !== null) this.add(join(dir, f), "session");
        this.opts.onChange();
      });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // Not there (yet), or not a directory: the next refresh tries again.
      if (code === "ENOENT" || code === "ENOTDIR") return;
      if (!this.limited) {
        this.limited = true;
        this.opts.logger.warn(
          `cannot watch ${dir} (${code ?? String(e)}); watching fewer directories, polling still picks up every change`,
        );
      }
      return;
    }
    watcher.on("error", () => {
      // The directory went away or the watch broke: drop it, the next refresh re-adds it if it exists.
      watcher.close();
      if (this.watchers.get(dir)?.watcher === watcher) this.watchers.delete(dir);
    });
    this.watchers.set(dir, { watcher, role });
  }
}

type Role = "db" | "sessions" | "session" | "ancestor";

/** Which file names in a watched directory matter. */
const RELEVANT: Record<Role, (name: string) => boolean> = {
  db: (f) => f.startsWith("sessions.db"),
  sessions: () => true,
  session: (f) => f.endsWith(SUFFIX),
  ancestor: () => true,
};

function existingAncestor(dir: string): string {
  let d = dir;
  while (!existsSync(d)) {
    const up = dirname(d);
    if (up === d) return d;
    d = up;
  }
  return d;
}

/** The `n` newest session directories: root ids begin with epoch milliseconds, so by name. */
export function newestSessionDirs(sessionsDir: string, n: number): string[] {
  if (n <= 0) return [];
  let names: string[];
  try {
    names = readdirSync(sessionsDir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    throw e;
  }
  return names
    .sort()
    .slice(-n)
    .reverse()
    .map((name) => join(sessionsDir, name));
}
