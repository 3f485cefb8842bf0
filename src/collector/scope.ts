/**
 * What one pass of the daemon's loop must look at (built from watch events, consumed by one pass),
 * and whether it must discover again.
 */
import { existsSync } from "node:fs";

/** What the next pass must look at; built from watch events, consumed by one pass. */
export interface PassScope {
  /** A full pass: discovery and a stat of every source (first pass, sweeps, requestPass()). */
  full: boolean;
  /** Run discovery again (the set of sources may have changed). */
  rediscover: boolean;
  readonly paths: Set<string>;
  readonly dirs: Set<string>;
  /** Known sources replaced by a rename: discovery runs only if one of them is gone now. */
  readonly renamed: Set<string>;
}

export function emptyScope(full: boolean): PassScope {
  return { full, rediscover: full, paths: new Set(), dirs: new Set(), renamed: new Set() };
}

/**
 * Whether a pass that has a discovery to reuse must run it again: asked for, or a known source
 * that a rename replaced is not there any more (a rename away, a deletion: the set of sources
 * changed). A known source renamed onto (a new inode at the same name) needs only its re-read.
 */
export function needsDiscovery(
  scope: Pick<PassScope, "rediscover" | "renamed">,
  exists: (path: string) => boolean = existsSync,
): boolean {
  if (scope.rediscover) return true;
  for (const path of scope.renamed) if (!exists(path)) return true;
  return false;
}
