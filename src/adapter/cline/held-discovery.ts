/**
 * The held discovery (issue 30, the idle daemon's minute): a full discovery of the messages surface
 * whose every input is the last one's hands on the last one's result, the very same Source
 * objects, instead of building 13,000 sources, hints, a map and two sets again each sweep. The
 * loop then sees the same array (its `sameSources`, the watch set and the combined list answer by
 * identity), and the sweep's garbage is the walk's alone.
 *
 * What a discovery's sources depend on, and how each is checked (discoverCline):
 * - the index rows: by the stat keys of `sessions.db` and its WAL (indexKey), taken before the
 *   last discovery read them (a change during that read makes the keys differ): the same keys are
 *   the same rows, as cachedIndexReader trusts. A held discovery reads no index and keeps no row;
 * - the walk: the same documents, in the same order (walkSessions re-lists a folder whose mark
 *   changed), every one plain (no symlink, whose target can change under the same name);
 * - the sessions dir's real path (the identity of the index's paths and the walk's);
 * - each sidecar the last discovery read (unindexed sessions' project and client): the same facts
 *   now (readSidecar's cache scans one again only when its stat key changed);
 * - nothing outside the walk: a last discovery that located an index row's document by a stat of
 *   its own (a path the walk did not list) or that had any problem is not held (such a stat, or a
 *   problem's cause, can change with none of the above), as the task surface's held sweep is not
 *   for a root with a problem (src/adapter/cline-tasks/discover.ts).
 *
 * Each document is still stat-ed by the gate (Adapter.unchangedNow), so the safety sweep's
 * contract (a change no watch saw is found within the sweep interval) is unchanged.
 */
import { join } from "node:path";
import type { Problem, Source } from "../types.ts";
import { readSidecar, type SidecarCache, type SidecarFacts } from "./sidecar.ts";
import type { ClineDiscovery, WalkedDocument } from "./types.ts";

/** The last discovery a later one may hand on, with what it was built from. */
export interface HeldInputs {
  /** indexKey of the index dir, taken before the read the discovery used. */
  readonly indexKey: string;
  readonly real: string;
  readonly docs: readonly WalkedDocument[];
  /** Each unindexed session folder's sidecar facts, by its root session id. */
  readonly sidecars: ReadonlyMap<string, SidecarFacts>;
  readonly discovery: ClineDiscovery;
}

/** Where an adapter keeps its last holdable discovery (one per adapter, in memory only). */
export interface DiscoveryHold {
  last: HeldInputs | undefined;
}

export function discoveryHold(): DiscoveryHold {
  return { last: undefined };
}

/** Whether two walks listed the same documents in the same order, each plain in both. */
export function sameWalk(a: readonly WalkedDocument[], b: readonly WalkedDocument[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as WalkedDocument;
    const y = b[i] as WalkedDocument;
    if (x.path !== y.path || !x.plain || !y.plain) return false;
  }
  return true;
}

/**
 * Whether every sidecar of `held` says what it said (read through the cache: a stat each, a scan
 * only of one whose key changed). A sidecar that cannot be read now is a change: the full
 * discovery reads it again and reports the problem (a failed read is not cached).
 */
export async function sidecarsUnchanged(
  sessionsDir: string,
  held: ReadonlyMap<string, SidecarFacts>,
  cache: SidecarCache,
): Promise<boolean> {
  const scratch: Problem[] = [];
  for (const [rootId, was] of held) {
    const now = await readSidecar(join(sessionsDir, rootId), rootId, scratch, cache);
    if (scratch.length > 0 || now.cwd !== was.cwd || now.source !== was.source) return false;
  }
  return true;
}

/** The last discovery, when this one's index keys, real path and walk are its own and its sidecars say the same. */
export async function heldDiscovery(
  hold: DiscoveryHold,
  now: { readonly indexKey: string; readonly real: string; readonly docs: readonly WalkedDocument[] },
  sessionsDir: string,
  cache: SidecarCache,
): Promise<ClineDiscovery | undefined> {
  const last = hold.last;
  if (
    last === undefined ||
    last.indexKey !== now.indexKey ||
    last.real !== now.real ||
    !sameWalk(last.docs, now.docs)
  )
    return undefined;
  return (await sidecarsUnchanged(sessionsDir, last.sidecars, cache)) ? last.discovery : undefined;
}

/**
 * Whether two lists of compaction sources (compactionSources) name the same files after the same
 * documents with the same hints: the combined list of a held discovery may then be the last one.
 */
export function sameCompactions(a: readonly Source[], b: readonly Source[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as Source;
    const y = b[i] as Source;
    if (x.path !== y.path || x.after !== y.after || x.hint !== y.hint || x.origin !== y.origin) return false;
  }
  return true;
}
