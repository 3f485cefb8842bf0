/**
 * "No Cline data found": said only when no source of any client has data (issue 28: a VS Code or
 * JetBrains user, whose only data is a task-format root, was told so while its tasks were read),
 * and then naming every place looked in (as `cline-otel paths` lists them) and how to add one.
 * A place has data when it exists as the readers take it: the CLI's sessions dir or its db dir
 * (discovery walks the one and reads the index in the other), a capture dir, or a task-format
 * root holding `tasks/` (docs/cline-format.md §15.1).
 */
import { existsSync } from "node:fs";
import { ENV } from "../adapter/cline/paths.ts";
import { taskFolderCount } from "../adapter/cline-tasks/discover.ts";
import type { TaskRoot } from "../adapter/cline-tasks/types.ts";
import type { LocalConfig } from "../config/config.ts";
import { TASK_ROOT_ENV } from "../config/task-roots.ts";

/** One place looked in: what it is for, where, and what named it. */
interface Place {
  readonly what: string;
  readonly path: string;
  readonly via: string;
  readonly present: boolean;
}

/** A root that cannot be listed (EACCES, ...) is there: the pass reports it as a problem, counted. */
function rootPresent(root: TaskRoot): boolean {
  try {
    return taskFolderCount(root) !== undefined;
  } catch {
    // Not skipped silently: discovery names the same root as `unlistable` in the pass's problems.
    return true;
  }
}

/** Every place `run` and `report` read, in the order `paths` shows them. */
export function dataPlaces(config: LocalConfig): Place[] {
  const c = config.cline;
  return [
    {
      what: "CLI sessions",
      path: c.sessions.path,
      via: c.sessions.via,
      present: existsSync(c.sessions.path),
    },
    { what: "CLI db", path: c.db.path, via: c.db.via, present: existsSync(c.db.path) },
    ...config.captureDirs.map((d) => ({
      what: "CLI captures",
      path: d.path,
      via: d.via,
      present: existsSync(d.path),
    })),
    ...config.taskRoots.map((r) => ({
      what: `tasks (${r.product})`,
      path: r.path,
      via: r.foundBy,
      present: rootPresent(r),
    })),
  ];
}

/** The warning, or undefined when any place has data. */
export function noClineDataMessage(config: LocalConfig): string | undefined {
  const places = dataPlaces(config);
  if (places.some((p) => p.present)) return undefined;
  const w = Math.max(...places.map((p) => p.what.length));
  return [
    `No Cline data found in any of the ${places.length} places looked in (none exists):`,
    ...places.map((p) => `  ${p.what.padEnd(w)}  ${p.path}  (${p.via})`),
    `If Cline keeps its data elsewhere: for the Cline CLI set ${ENV.dir}, ${ENV.dataDir}, ${ENV.sessionDataDir} or ${ENV.dbDataDir}`,
    "(or --cline-dir, --data-dir, --sessions-dir, --db-dir); for a task-format root (a dir holding tasks/:",
    "the VS Code extension's global storage, JetBrains' or Cline CLI 1.x/2.x's <CLINE_DIR>/data) add",
    `--task-root <dir> (repeatable) or ${TASK_ROOT_ENV.add}. \`cline-otel paths\` shows what was resolved.`,
  ].join("\n");
}
