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
import type { ActiveTimeGroup, ActiveTimeline, ActiveTimeType } from "./types.ts";

/**
 * The idle cut-offs, in ms. User: 15 minutes, WakaTime's default timeout; longer than that
 * between the agent stopping and the user's next act is a break, not review. Agent: 30 minutes;
 * a single request or tool run (a build, a test suite) can legitimately take minutes, and longer
 * than that without a message is a stalled or suspended process.
 */
export const IDLE_CUTOFF_MS: Readonly<Record<ActiveTimeType, number>> = Object.freeze({
  user: 15 * 60_000,
  agent: 30 * 60_000,
});

export interface TimelineContext {
  readonly sessionId: string;
  readonly agent: string;
  readonly project: string;
  readonly sourcePath: string;
  readonly client?: string;
  /** The timeline's key (ActiveTimeline.streamKey). */
  readonly streamKey: string;
}

/**
 * A document's timeline, built one message at a time (its points, in document order) into one
 * ActiveTimeline: no object per message or gap (each gap is three numbers in growing arrays, each
 * distinct type, model and provider one group).
 */
export class TimelineBuilder {
  private readonly starts: number[] = [];
  private readonly durations: number[] = [];
  private readonly groupOf: number[] = [];
  private readonly groups: ActiveTimeGroup[] = [];
  /** The latest timestamp so far (0: none yet). */
  private latest = 0;
  /** The gap the last point closed (-1: none): it is final only once another point follows. */
  private pendingStart = -1;
  private pendingDuration = 0;
  private pendingGroup = 0;

  /**
   * One message: its `ts` (0: none), whose is the gap it closes, and the model and provider in use
   * at it (the gap's attributes).
   */
  add(ts: number, type: ActiveTimeType, model: string, provider: string): void {
    this.settle();
    if (!(ts > 0)) return;
    const latest = this.latest;
    if (ts <= latest) return;
    this.latest = ts;
    if (latest === 0) return;
    const durationMs = ts - latest;
    if (durationMs > IDLE_CUTOFF_MS[type]) return;
    this.pendingStart = latest;
    this.pendingDuration = durationMs;
    this.pendingGroup = this.groupIndex(type, model, provider);
  }

  /**
   * The closed gaps as one timeline (none when it has no gap). `lastOpen`: the last message may
   * still change (a message still streaming, a request in flight that a resume may delete), so the
   * gap it closes is not final yet and waits for the next read.
   */
  done(lastOpen: boolean, ctx: TimelineContext): ActiveTimeline[] {
    if (!lastOpen) this.settle();
    const n = this.starts.length;
    if (n === 0) return [];
    // One buffer for the three columns: 8 + 8 + 4 bytes a gap.
    const buf = new ArrayBuffer(n * 20);
    const startMs = new Float64Array(buf, 0, n);
    const durationMs = new Float64Array(buf, n * 8, n);
    const group = new Uint32Array(buf, n * 16, n);
    startMs.set(this.starts);
    durationMs.set(this.durations);
    group.set(this.groupOf);
    return [
      {
        streamKey: ctx.streamKey,
        sessionId: ctx.sessionId,
        agent: ctx.agent,
        project: ctx.project,
        sourcePath: ctx.sourcePath,
        ...(ctx.client === undefined ? {} : { client: ctx.client }),
        groups: this.groups,
        startMs,
        durationMs,
        group,
      },
    ];
  }

  /** The last point's gap is final: another point follows it (or the document is complete). */
  private settle(): void {
    if (this.pendingStart < 0) return;
    this.starts.push(this.pendingStart);
    this.durations.push(this.pendingDuration);
    this.groupOf.push(this.pendingGroup);
    this.pendingStart = -1;
  }

  private groupIndex(type: ActiveTimeType, model: string, provider: string): number {
    // Most gaps share the group of the gap before them or the one before that (user and agent
    // alternate); a timeline has a handful of groups, so a walk from the end finds it.
    const groups = this.groups;
    for (let i = groups.length - 1; i >= 0; i--) {
      const g = groups[i] as ActiveTimeGroup;
      if (g.type === type && g.model === model && g.provider === provider) return i;
    }
    groups.push({ type, model, provider });
    return groups.length - 1;
  }
}
