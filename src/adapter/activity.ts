/**
 * Active time from timestamps only (docs/metrics.md "Active time"), shared by the adapters: a
 * document's messages in document order are points of a timeline; each gap between the latest
 * timestamp so far and the next larger one is the agent's or the user's, by what the adapter says
 * of the message that closes it. Following Claude Code's `claude_code.active_time.total`
 * (`type` = user | cli), with an idle cut-off per type: a gap longer than it is idle time and
 * counts nothing (as WakaTime's keystroke timeout, whose default is 15 minutes).
 *
 * The running maximum makes the gaps of one view disjoint whatever the order of the timestamps
 * (CLI 3.x stores a tool result at its completion time); each is keyed by its start, so a later
 * view of the same gap (the document rewritten, a cancelled entry deleted on resume) adds nothing:
 * first seen wins in the ledger.
 */
import type { ActiveTimeRecord } from "./types.ts";

/**
 * The idle cut-offs, in ms. User: 15 minutes, WakaTime's default timeout; longer than that
 * between the agent stopping and the user's next act is a break, not review. Agent: 30 minutes;
 * a single request or tool run (a build, a test suite) can legitimately take minutes, and longer
 * than that without a message is a stalled or suspended process.
 */
export const IDLE_CUTOFF_MS: Readonly<Record<ActiveTimeRecord["type"], number>> = Object.freeze({
  user: 15 * 60_000,
  agent: 30 * 60_000,
});

/** One message of a timeline: its `ts` (0: none) and whose is the gap it closes. */
export interface TimelinePoint {
  readonly ts: number;
  readonly type: ActiveTimeRecord["type"];
  /** Model and provider in use at this point (the record's attributes). */
  readonly model: string;
  readonly provider: string;
}

export interface TimelineContext {
  readonly sessionId: string;
  readonly agent: string;
  readonly project: string;
  readonly sourcePath: string;
  readonly client?: string;
  /** The timeline's key (ActiveTimeRecord.streamKey). */
  readonly streamKey: string;
}

/**
 * The closed gaps of a timeline, as records. `lastOpen`: the last point may still change (a
 * message still streaming, a request in flight that a resume may delete), so the gap it closes is
 * not final yet and waits for the next read.
 */
export function activeTimeRecords(
  points: readonly TimelinePoint[],
  lastOpen: boolean,
  ctx: TimelineContext,
): ActiveTimeRecord[] {
  const out: ActiveTimeRecord[] = [];
  let latest = 0;
  const end = lastOpen ? points.length - 1 : points.length;
  for (let i = 0; i < end; i++) {
    const p = points[i] as TimelinePoint;
    if (!(p.ts > 0)) continue;
    if (latest > 0 && p.ts > latest) {
      const durationMs = p.ts - latest;
      if (durationMs <= IDLE_CUTOFF_MS[p.type])
        out.push({
          streamKey: ctx.streamKey,
          sessionId: ctx.sessionId,
          agent: ctx.agent,
          type: p.type,
          startMs: latest,
          durationMs,
          model: p.model,
          provider: p.provider,
          project: ctx.project,
          sourcePath: ctx.sourcePath,
          ...(ctx.client === undefined ? {} : { client: ctx.client }),
        });
    }
    if (p.ts > latest) latest = p.ts;
  }
  return out;
}
