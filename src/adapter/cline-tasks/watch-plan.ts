import { basename, dirname, join } from "node:path";
import type { WatchPlan } from "../types.ts";
import { UI_MESSAGES } from "./discover.ts";
import { HISTORY_FILE } from "./history.ts";
import type { TaskRoot } from "./types.ts";

/**
 * What the daemon watches for one task-format root (docs/cline-format.md §15.9): every task folder
 * of `<root>/tasks` (the legacy core rewrites `ui_messages.json` whole, through a temp file and a
 * rename onto that name: only the final name is relevant, never the temp file), and `state/`,
 * where `taskHistory.json` (cwd and totals per task) is an index: its change means discover again.
 */
export function taskWatchPlan(root: TaskRoot): WatchPlan {
  const history = basename(HISTORY_FILE);
  return Object.freeze({
    sourcesRoot: join(root.path, "tasks"),
    indexDir: join(root.path, dirname(HISTORY_FILE)),
    isIndexFile: (name: string) => name === history,
    isSourceFile: (name: string) => name === UI_MESSAGES,
  });
}
