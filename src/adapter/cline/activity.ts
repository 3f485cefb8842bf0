/**
 * CLI 3.x active time, commits and pull requests, and session starts (docs/cline-format.md §17):
 * - a `run_commands` call's `commands` (one line or an array) are read as bytes; command i counts
 *   when the result's object i says `success: true` without an `error` (the result holds one
 *   `{query, result, success}` per command), never when the call was denied (`is_error`);
 * - the lead document's messages are the timeline; a gap is the user's when the message closing it
 *   is a prompt (a user message without tool results), else the agent's (a response, a tool's
 *   result). An approval's wait is inside a tool result's gap: the files do not tell it apart, so
 *   it is the agent's here;
 * - the lead document is one session start, `new`: a resume (`cline --id`, a TUI) appends to the
 *   same document and leaves the sessions.db row as it was (same pid, started_at), stored exactly
 *   as a follow-up prompt of an interactive session, so `resumed` is never told for CLI 3.x.
 */
import { isWrongType, type RawBytes } from "../../scan/schema.ts";
import { deliveryRecords } from "../deliveries.ts";
import type { DeliveryRecord, SessionStartRecord, ToolCall } from "../types.ts";
import { sessionStartKey } from "./dedup.ts";
import type { ScannedResultJson } from "./outcome.ts";

/** Tools whose input holds command lines (`commands`). */
export const COMMAND_TOOLS: ReadonlySet<string> = new Set(["run_commands"]);

function isRaw(v: unknown): v is RawBytes {
  return typeof v === "object" && v !== null && !isWrongType(v) && Buffer.isBuffer((v as RawBytes).buf);
}

/** The scanned `commands` of an input, in order; a line too long to read is `undefined` (not counted). */
export function commandLines(input: { readonly commands?: unknown } | undefined): (RawBytes | undefined)[] {
  const c = input?.commands;
  if (c === undefined || isWrongType(c)) return [];
  if (Array.isArray(c)) return c.map((v) => (isRaw(v) && !v.truncated ? v : undefined));
  return [isRaw(c) && !c.truncated ? c : undefined];
}

/** A result object says its command succeeded: `success: true` and no `error`. */
function succeeded(o: ScannedResultJson | undefined): boolean {
  return o !== undefined && o.success === true && o.error === undefined;
}

/**
 * The commits and pull requests of one command call, given its result's objects and outcome
 * (none while the result is not in the document, or for a denied call).
 */
export function commandDeliveries(
  call: ToolCall,
  lines: readonly (RawBytes | undefined)[],
  result: { readonly outcome: string; readonly json: readonly ScannedResultJson[] } | undefined,
): DeliveryRecord[] {
  if (result === undefined || result.outcome === "rejected" || result.outcome === "unknown") return [];
  const ok = lines.flatMap((l, i) =>
    l !== undefined && succeeded(result.json[i])
      ? [{ buf: l.buf, start: l.start, end: l.end, depth: 1 as const }]
      : [],
  );
  return deliveryRecords(call, ok);
}

/** The lead document's start: one `new` record at its first message's ts. */
export function sessionStart(
  d: {
    readonly sessionId: string;
    readonly agent: string;
    readonly project: string;
    readonly path: string;
    readonly client: string;
  },
  firstTs: number,
  model: string,
  provider: string,
): SessionStartRecord {
  return {
    startKey: sessionStartKey(d.sessionId, d.agent),
    sessionId: d.sessionId,
    agent: d.agent,
    startType: "new",
    timestampMs: firstTs,
    model,
    provider,
    project: d.project,
    sourcePath: d.path,
    client: d.client,
  };
}
