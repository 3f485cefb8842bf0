/**
 * What a discovery keeps of an index read (IndexFacts): its outcome, and whether every row's
 * document path is one the walk would list. A module of its own, importing no reader: discovery
 * takes the facts, the quiet entry (quiet.ts) reads them.
 */
import { MESSAGES_SUFFIX } from "./compaction/files.ts";
import type { IndexReadResult } from "./index-db.ts";
import type { IndexFacts } from "./types.ts";

/** A document path as the walk writes it: `<sessions>/<folder>/<file>`, the folder a plain name. */
export function walkShaped(path: string, under: string): boolean {
  if (!path.startsWith(under)) return false;
  const slash = path.indexOf("/", under.length);
  if (slash <= under.length || slash !== path.lastIndexOf("/")) return false;
  // Asked of every index row by each full discovery: the folder and name compared in place.
  const dots = slash - under.length;
  if (dots <= 2 && path.slice(under.length, slash).replaceAll(".", "") === "") return false;
  // isUsageSource of the name (a name ending so is never a compaction file's).
  return path.endsWith(MESSAGES_SUFFIX) && path.length - slash - 1 > MESSAGES_SUFFIX.length;
}

/**
 * What a quiet entry needs of an index read (IndexFacts), taken by the full discovery that read
 * it: a held discovery hands these on without the rows.
 */
export function indexFacts(index: IndexReadResult, sessionsDir: string): IndexFacts {
  const under = `${sessionsDir}/`;
  let rowsWalkShaped = true;
  for (const r of index.rows) {
    const p = r.messagesPath;
    if (p !== null && p !== "" && !walkShaped(p, under)) {
      rowsWalkShaped = false;
      break;
    }
  }
  return {
    status: index.status,
    ...(index.cacheProblem !== undefined ? { cacheProblem: index.cacheProblem } : {}),
    rowsWalkShaped,
  };
}
