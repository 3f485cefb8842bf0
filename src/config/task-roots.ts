/**
 * The task-format roots to read (docs/cline-format.md §15.1), resolved once with the rest of the
 * configuration: the adapter's candidates plus the roots the user names, minus the ones excluded.
 *   --task-root <dir> (repeatable)       CLINE_OTEL_TASK_ROOTS       add (path-list, `:` or `;` on Windows)
 *   --skip-task-root <dir> (repeatable)  CLINE_OTEL_SKIP_TASK_ROOTS  remove
 *   --only-task-roots                    CLINE_OTEL_ONLY_TASK_ROOTS  only the added ones
 * Flags win over the variables of the same kind (whoever names a root on the command line means it).
 */
import { taskRootCandidates } from "../adapter/cline-tasks/paths.ts";
import type { TaskRoot } from "../adapter/cline-tasks/types.ts";
import { type Env, envStr } from "./env.ts";

export const TASK_ROOT_ENV = {
  add: "CLINE_OTEL_TASK_ROOTS",
  skip: "CLINE_OTEL_SKIP_TASK_ROOTS",
  only: "CLINE_OTEL_ONLY_TASK_ROOTS",
} as const;

interface TaskRootFlags {
  readonly taskRoot?: readonly string[] | undefined;
  readonly skipTaskRoot?: readonly string[] | undefined;
}

function pathList(v: string | undefined, platform: NodeJS.Platform): string[] {
  if (v === undefined) return [];
  return v
    .split(platform === "win32" ? ";" : ":")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

export function resolveTaskRoots(
  flags: TaskRootFlags,
  env: Env,
  home: string,
  cwd: string,
  platform: NodeJS.Platform,
  /** `--only-task-roots` or CLINE_OTEL_ONLY_TASK_ROOTS, parsed by the caller. */
  only: boolean,
): TaskRoot[] {
  const add =
    flags.taskRoot !== undefined && flags.taskRoot.length > 0
      ? flags.taskRoot.map((path) => ({ path, via: "--task-root" }))
      : pathList(envStr(env, TASK_ROOT_ENV.add), platform).map((path) => ({ path, via: TASK_ROOT_ENV.add }));
  const remove =
    flags.skipTaskRoot !== undefined && flags.skipTaskRoot.length > 0
      ? [...flags.skipTaskRoot]
      : pathList(envStr(env, TASK_ROOT_ENV.skip), platform);
  const vars = {
    CLINE_DIR: envStr(env, "CLINE_DIR"),
    XDG_CONFIG_HOME: envStr(env, "XDG_CONFIG_HOME"),
    APPDATA: envStr(env, "APPDATA"),
  };
  return taskRootCandidates({ home, platform, env: vars, cwd, add, remove, defaults: !only });
}
