/**
 * Task format active time, commits and pull requests, and session starts (docs/cline-format.md §17):
 * - timeline: every message in document order; the gap a message closes is the user's when the
 *   message before it is an ask that waits for the user (an approval, a follow-up question, a
 *   completion, a resume: everything but `command_output`, which a running command streams) or a
 *   `say: "completion_result"`, or when the message itself is the user's (`user_feedback`) or a
 *   resume (`resume_task`, written when the user reopens the task); else the agent's. The gap
 *   closed by the last message is not final while that message is partial or a request in
 *   flight (a resume deletes a cancelled request: the key of a gap is its start, first seen wins);
 * - a command (`say: "command"` auto-approved, `ask: "command"` asked; its text is the command
 *   line, `REQ_APP` appended to an asked one) counts when the next request's text answers it with
 *   a result (answers.ts), never when denied or failed;
 * - `say: "task"` starts the task (`new`); an `ask: "resume_task"` / `"resume_completed_task"`
 *   followed by any message is a resume (`cline task -T`, reopening it in an IDE), keyed by its ts.
 */
import { isWrongType, type RawBytes } from "../../scan/schema.ts";
import type { ActiveTimeType, SessionStartRecord } from "../types.ts";
import { taskSessionKey } from "./dedup.ts";

/** Asks whose answer is the user's: the gap after them is the user's time. */
const NOT_WAITING_ASKS: ReadonlySet<string> = new Set(["command_output"]);
/** Asks written when the user reopens a task. */
export const RESUME_ASKS: ReadonlySet<string> = new Set(["resume_task", "resume_completed_task"]);

/** What of a message the timeline needs. */
export interface TimelineMessage {
  readonly type?: unknown;
  readonly say?: unknown;
  readonly ask?: unknown;
}

/** Whether the gap that `msg` closes (`prev` the message before it) is the user's. */
export function gapType(prev: TimelineMessage | undefined, msg: TimelineMessage): ActiveTimeType {
  if (msg.type === "say" && msg.say === "user_feedback") return "user";
  if (msg.type === "ask" && typeof msg.ask === "string" && RESUME_ASKS.has(msg.ask)) return "user";
  if (prev === undefined) return "agent";
  if (prev.type === "ask" && typeof prev.ask === "string" && !NOT_WAITING_ASKS.has(prev.ask)) return "user";
  if (prev.type === "say" && prev.say === "completion_result") return "user";
  return "agent";
}

/** A command message's text as raw bytes (the schema's fallback for a text that is not JSON). */
export function commandText(text: unknown): RawBytes | undefined {
  if (text === undefined || isWrongType(text)) return undefined;
  const r = text as RawBytes;
  return Buffer.isBuffer(r.buf) && !r.truncated ? r : undefined;
}

/** A `session start` of the task: `new` at its `say: "task"`, or `resumed` at an answered resume ask. */
export function taskSessionStart(
  ctx: {
    readonly rootPath: string;
    readonly taskId: string;
    readonly agent: string;
    readonly project: string;
    readonly path: string;
    readonly client: string;
  },
  startType: SessionStartRecord["startType"],
  ts: number,
  model: string,
  provider: string,
): SessionStartRecord {
  return {
    startKey: taskSessionKey(ctx.rootPath, ctx.taskId, startType === "new" ? undefined : ts),
    sessionId: ctx.taskId,
    agent: ctx.agent,
    startType,
    timestampMs: ts,
    model,
    provider,
    project: ctx.project,
    sourcePath: ctx.path,
    client: ctx.client,
  };
}
