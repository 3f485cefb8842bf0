/**
 * The repository of each workspace, kept while its git files stay the same: at most once per
 * collection pass per workspace (`nextPass`), a stat of the files it came from (`.git/config`,
 * `HEAD`, and where the git dir is) tells whether to read them again, so a remote added or a
 * branch switched while the daemon runs shows on what is exported next. Bounded: the workspaces
 * least recently looked at (by pass) are forgotten past `maxWorkspaces` (read again if they return).
 */
import { type BigIntStats, statSync } from "node:fs";
import { join } from "node:path";
import { findGitFiles } from "./git-dir.ts";
import {
  NONE,
  type RepositoryAttributes,
  type RepositoryLookup,
  repositoryAttributes,
} from "./repository.ts";

export const MAX_WORKSPACES = 1024;

function statKey(path: string): string {
  let s: BigIntStats | undefined;
  try {
    s = statSync(path, { bigint: true, throwIfNoEntry: false });
  } catch (e) {
    // A file in the way of the path (ENOTDIR): as absent. Anything else is the caller's to report.
    if ((e as NodeJS.ErrnoException).code !== "ENOTDIR") throw e;
  }
  return s === undefined ? "-" : `${s.size}:${s.mtimeNs}:${s.ino}`;
}

/**
 * What a workspace's repository attributes were read from, as one comparable string: where its
 * git dir and common dir are, and size, nanosecond mtime and inode of HEAD and config (git
 * rewrites both through a lock file and a rename: a new inode). "" outside any repository.
 */
export function gitFingerprint(workspace: string): string {
  const files = workspace === "" ? undefined : findGitFiles(workspace);
  if (files === undefined) return "";
  const head = statKey(join(files.gitDir, "HEAD"));
  const config = statKey(join(files.commonDir, "config"));
  return `${files.gitDir}\0${files.commonDir}\0${head}\0${config}`;
}

interface Entry {
  readonly attrs: RepositoryAttributes;
  readonly fingerprint: string;
  /** The pass in which the fingerprint was last compared. */
  checkedIn: number;
  readonly failed: boolean;
}

export interface RepositoryCacheOptions {
  /** A workspace that cannot be read: reported once per failure spell, exported without `vcs.*`. */
  readonly onError: (workspace: string, e: unknown) => void;
  readonly read?: (workspace: string) => RepositoryAttributes;
  readonly fingerprint?: (workspace: string) => string;
  readonly maxWorkspaces?: number;
}

export class RepositoryCache {
  private pass = 0;
  private readonly entries = new Map<string, Entry>();
  private readonly read: (workspace: string) => RepositoryAttributes;
  private readonly fingerprint: (workspace: string) => string;
  private readonly max: number;

  constructor(private readonly opts: RepositoryCacheOptions) {
    this.read = opts.read ?? repositoryAttributes;
    this.fingerprint = opts.fingerprint ?? gitFingerprint;
    this.max = Math.max(1, opts.maxWorkspaces ?? MAX_WORKSPACES);
  }

  /** A collection pass ended: each workspace's files are looked at again (once) when next asked for. */
  nextPass(): void {
    this.pass++;
  }

  /** The workspace's attributes now (the lookup the exporters are given). */
  readonly lookup: RepositoryLookup = (workspace) => {
    const e = this.entries.get(workspace);
    if (e !== undefined && e.checkedIn === this.pass) return e.attrs;
    let fingerprint: string;
    try {
      fingerprint = this.fingerprint(workspace);
    } catch (err) {
      return this.remember(
        workspace,
        e,
        { attrs: NONE, fingerprint: "", checkedIn: this.pass, failed: true },
        err,
      );
    }
    if (e !== undefined && e.fingerprint === fingerprint && !e.failed) {
      e.checkedIn = this.pass;
      // Re-inserted: the Map's order is the recency (by pass) the bound evicts by.
      this.entries.delete(workspace);
      this.entries.set(workspace, e);
      return e.attrs;
    }
    // Read after the fingerprint: a change in between is seen by the next pass's comparison.
    try {
      const attrs = this.read(workspace);
      return this.remember(workspace, e, { attrs, fingerprint, checkedIn: this.pass, failed: false });
    } catch (err) {
      return this.remember(
        workspace,
        e,
        { attrs: NONE, fingerprint, checkedIn: this.pass, failed: true },
        err,
      );
    }
  };

  /** Workspaces held now (tests). */
  get size(): number {
    return this.entries.size;
  }

  private remember(
    workspace: string,
    prev: Entry | undefined,
    next: Entry,
    err?: unknown,
  ): RepositoryAttributes {
    if (next.failed && prev?.failed !== true) this.opts.onError(workspace, err);
    this.entries.delete(workspace);
    this.entries.set(workspace, next);
    if (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    return next.attrs;
  }
}
