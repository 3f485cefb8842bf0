import type { WatchPlan } from "../types.ts";
import { isCompactionFile, isUsageSource } from "./compaction/files.ts";
import { SESSIONS_DB } from "./index-db.ts";
import type { ClinePaths, ResolvedPath } from "./paths.ts";

/**
 * What the daemon watches for Cline: every session folder of the sessions dir (Cline rewrites
 * `<id>.messages.json` in place and `<id>.compaction.json` by tmp + rename), `sessions.db` and its
 * WAL in the db dir, and the capture dirs (any change: discover again).
 */
export function clineWatchPlan(cline: ClinePaths, captureDirs: readonly ResolvedPath[]): WatchPlan {
  return Object.freeze({
    sourcesRoot: cline.sessions.path,
    indexDir: cline.db.path,
    isIndexFile: (name: string) => name.startsWith(SESSIONS_DB),
    isSourceFile: (name: string) => isUsageSource(name) || isCompactionFile(name),
    otherDirs: Object.freeze(captureDirs.map((d) => d.path)),
  });
}
