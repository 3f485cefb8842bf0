/**
 * How a stored call or turn becomes final (src/ledger/signals/signals.ts calls these inside its commit
 * or sweep transaction): the statement that flips its `final` flag is the guard, then its record
 * is written, numbered next in the one order, and its duration observed.
 */
import { durationMs, type ToolOutcome, toolOutcome } from "../../adapter/timing.ts";
import type { GenaiSeries } from "../genai/genai.ts";
import type { QueueWriter } from "./queue.ts";
import type { prepareSignalWrites } from "./writes.ts";

/** The lead agent's name: its turns are the ones sub-agents and teammates nest under. */
const LEAD = "lead";

export interface CallDims {
  readonly sessionId: string;
  /** Absent on an adapter's call that does not say (as ToolCall.client). */
  readonly client?: string | undefined;
  readonly project: string;
  readonly model: string;
  readonly provider: string;
  readonly toolName: string;
}

export interface CallIds {
  readonly messageId: string;
  readonly toolUseId: string;
  readonly turnKey: string;
}

export interface TurnRow {
  turnKey: string;
  rootSessionId: string;
  sessionId: string;
  agent: string;
  startMs: number;
  endMs: number;
  sourcePath: string;
}

export class SignalFinals {
  /** Whether signal_calls may hold open calls (checked at each transaction's start). */
  openCalls = true;

  constructor(
    private readonly writes: () => ReturnType<typeof prepareSignalWrites>,
    private readonly queue: QueueWriter,
    private readonly genai: GenaiSeries,
  ) {}

  /**
   * Finalizes an open call (signal_calls): its `final` flag flipped 0 -> 1 is the guard (false:
   * it was final already), then its record written on its tool_calls row with its ids.
   */
  call(callKey: string, tsMs: number, endMs: number, outcome: ToolOutcome, cancelled: boolean): boolean {
    const w = this.writes();
    const ids = w.closeCall.get({ callKey }) as CallIds | undefined;
    if (ids === undefined) return false;
    const dims = w.callDims.get({ callKey }) as CallDims | undefined;
    this.putRecord(callKey, tsMs, endMs, outcome, cancelled, dims, ids);
    return true;
  }

  /**
   * Writes the record of a stored call that just became final (its caller holds the guard) on
   * its tool_calls row, numbered next, and observes its duration.
   */
  putRecord(
    callKey: string,
    tsMs: number,
    endMs: number,
    outcome: ToolOutcome,
    cancelled: boolean,
    dims: CallDims | undefined,
    ids: CallIds,
  ): void {
    const info = this.writes().putCallRecord.run({
      callKey,
      seq: this.queue.peek(),
      endMs: Math.max(tsMs, endMs),
      outcome,
      cancelled: cancelled ? 1 : 0,
      ...ids,
    });
    if (info.changes !== 1) return; // no such call (or final already): nothing numbered
    this.queue.take();
    if (dims !== undefined) this.observeToolDuration(dims, tsMs, endMs, outcome);
  }

  /** A final call's cline.tool.duration observation (none without a valid time). */
  observeToolDuration(dims: CallDims, tsMs: number, endMs: number, outcome: ToolOutcome): void {
    const d = durationMs(tsMs, Math.max(tsMs, endMs));
    if (d === undefined) return;
    this.genai.observeTool(
      {
        sessionId: dims.sessionId,
        client: dims.client ?? "",
        project: dims.project,
        model: dims.model,
        provider: dims.provider,
        toolName: dims.toolName,
        outcome,
      },
      d / 1000,
      tsMs,
    );
  }

  /**
   * Queues a turn that is over, after the calls of it still open (cut off at its end): its
   * `final` flag flipped 0 -> 1 is the guard. Returns the records queued (0: final already).
   */
  turn(t: TurnRow): number {
    if (this.writes().closeTurn.run({ turnKey: t.turnKey }).changes === 0) return 0;
    return this.queueTurn(t);
  }

  /**
   * Queues a turn whose `final` flag its caller just set (it holds the guard: `turn`, or the
   * upsert that stored it final), after the calls of it still open. Returns the records queued.
   */
  queueTurn(t: TurnRow): number {
    const w = this.writes();
    let n = 1;
    // No lookup when no call is open (a backfill: every result is on disk).
    const open = this.openCalls
      ? (w.openCallsOfTurn.all({ turnKey: t.turnKey }) as { callKey: string; tsMs: number }[])
      : [];
    for (const c of open) if (this.call(c.callKey, c.tsMs, t.endMs, toolOutcome(null), true)) n++;
    // Sub-agents and teammates nest under the lead's turn that was running when theirs began:
    // the latest lead turn of the same root session that started at or before it.
    let parentKey = "";
    if (t.agent !== LEAD) {
      const p = w.leadTurnAt.get({ rootSessionId: t.rootSessionId, startMs: t.startMs }) as
        | { turnKey: string }
        | undefined;
      parentKey = p?.turnKey ?? "";
    }
    this.queue.add({
      kind: "turn",
      refKey: t.turnKey,
      tsMs: t.startMs,
      endMs: Math.max(t.startMs, t.endMs),
      outcome: null,
      cancelled: false,
      startMs: t.startMs,
      turnKey: parentKey,
      messageId: "",
      toolUseId: "",
    });
    return n;
  }
}
