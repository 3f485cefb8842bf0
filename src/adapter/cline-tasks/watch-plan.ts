import { basename, dirname, join } from "node:path";
import type { WatchPlan } from "../types.ts";
import { UI_MESSAGES } from "./discover.ts";
import { HISTORY_FILE } from "./history.ts";
import type { TaskRoot } from "./types.ts";

/**
 * What the daemon watches for one task-format root (docs/cline-format.md §15.9): every task folder
 * of `<root>/tasks` (the legacy core rewrites `ui_messages.json` whole, through a temp file and a
 * rename onto that name: only the final name is relevant, never the temp file), and `state/`,
 * where `taskHistory.json` (cwd and totals per task) is an index: its change means discover again
 * while a listed task has no entry in it yet (`needsHistory`).
 */
export function taskWatchPlan(
  root: TaskRoot,
  needsHistory: (root: string) => boolean = () => true,
): WatchPlan {
  const history = basename(HISTORY_FILE);
  return Object.freeze({
    sourcesRoot: join(root.path, "tasks"),
    indexDir: join(root.path, dirname(HISTORY_FILE)),
    isIndexFile: (name: string) => name === history,
    // The history is rewritten with every request; discovery takes only each task's cwd from it
    // (set when the task starts), so once every listed task has its entry a rewrite brings nothing
    // a pass needs (the totals checked against it may lag: a lag is never reported, §15.6).
    needsIndex: () => needsHistory(root.path),
    isSourceFile: (name: string) => name === UI_MESSAGES,
  });
}
