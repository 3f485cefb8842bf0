/**
 * Keys of the task format. A request has no id of its own: its `api_req_started` entry's `ts`
 * is the one identity that is stable across rewrites and resumes (docs/cline-format.md §15.3).
 * Keys are scoped by adapter, root and task, so a task id that equals an SDK session id (Cline
 * 3.0.65 reuses them) never meets the CLI adapter's keys. Components are escaped as the CLI
 * adapter's are, so no choice of paths or ids makes two tuples spell one key.
 */
import { CLINE_TASKS_ADAPTER_ID } from "./types.ts";

function part(s: string): string {
  // Most components (the root, ids, times) need no escaping: returned as they are, no regex run.
  if (!s.includes("%") && !s.includes("|")) return s;
  return s.replace(/%/g, "%25").replace(/\|/g, "%7C");
}

function key(root: string, taskId: string, ...rest: string[]): string {
  return [CLINE_TASKS_ADAPTER_ID, root, taskId, ...rest].map(part).join("|");
}

/** `cline-tasks|<root>|<task id>|<request ts>` */
export function requestKey(root: string, taskId: string, ts: number): string {
  return key(root, taskId, String(ts));
}

/**
 * `cline-tasks|<root>|<task id>|subagents|<message ts>|<n>`: a `subagent_usage` message; n counts
 * those sharing one ts. Never a request key: a request's ts may equal it.
 */
export function subagentUsageKey(root: string, taskId: string, ts: number, n: number): string {
  return key(root, taskId, "subagents", String(ts), String(n));
}

/** `cline-tasks|<root>|<task id>|tool|<message ts>|<n>`: n counts messages sharing one ts. */
export function taskToolKey(root: string, taskId: string, ts: number, n: number): string {
  return key(root, taskId, "tool", String(ts), String(n));
}

/** `cline-tasks|<root>|<task id>|turn|<prompt ts>` */
export function taskTurnKey(root: string, taskId: string, turnId: string): string {
  return key(root, taskId, "turn", turnId);
}

/** `cline-tasks|<root>|<task id>|active`: the task's timeline (ActiveTimeline.streamKey). */
export function taskActiveStreamKey(root: string, taskId: string): string {
  return key(root, taskId, "active");
}

/** `cline-tasks|<root>|<task id>|session|new` or `...|session|resumed|<resume ask ts>`. */
export function taskSessionKey(root: string, taskId: string, resumedAt?: number): string {
  return resumedAt === undefined
    ? key(root, taskId, "session", "new")
    : key(root, taskId, "session", "resumed", String(resumedAt));
}
